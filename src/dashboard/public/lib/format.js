const dateTime = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "medium"});
const relative = new Intl.RelativeTimeFormat(undefined, {numeric: "auto"});

/** "22 Nov 2026, 10:04:31" in the browser's zone; an em dash for nothing. */
export function when(iso) {
  return iso ? dateTime.format(new Date(iso)) : "—";
}

/** "3 minutes ago" */
export function ago(iso, nowMs = Date.now()) {
  if (!iso) return "never";
  const seconds = Math.round((new Date(iso).getTime() - nowMs) / 1000);
  const units = [
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60]
  ];
  for (const [unit, size] of units)
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return relative.format(seconds, "second");
}

/** A <time> element showing the local time, with the exact instant for machines and tooltips. */
export function timeElement(h, iso, mode = "when") {
  if (!iso) return h("span", {}, mode === "ago" ? "never" : "—");
  return h("time", {datetime: iso, title: when(iso)}, mode === "ago" ? ago(iso) : when(iso));
}

/** 90 → "90 s", 3600 → "1 h", 86400 → "24 h": how people say a period. */
export function duration(seconds) {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0 && seconds >= 120) return `${seconds / 60} min`;
  return `${seconds} s`;
}

export function bytes(value) {
  if (value === null || value === undefined) return "unknown";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export const CHANNEL_NAMES = {telegram_voice: "Telegram voice", voice_call: "Voice call", sms: "SMS", email: "Email"};
export const CHANNELS = Object.keys(CHANNEL_NAMES);
export const PRIORITIES = ["critical", "high", "medium", "low", "info"];
/** `suppressed`: held by a maintenance window, nobody paged. */
export const STATUSES = ["queued", "notifying", "acknowledged", "resolved", "exhausted", "suppressed"];
export const SCOPES = [
  "notifications:send",
  "notifications:read",
  "notifications:ack",
  "recipients:read",
  "recipients:write",
  "admin"
];
export const EVENT_TYPES = [
  "notification.sent",
  "notification.delivered",
  "notification.acknowledged",
  "notification.resolved",
  "notification.priority_raised",
  "notification.suppressed",
  "notification.released",
  "escalation.started",
  "escalation.step",
  "escalation.exhausted",
  "contact.failed"
];

export function channelName(channel) {
  return CHANNEL_NAMES[channel] ?? channel;
}
