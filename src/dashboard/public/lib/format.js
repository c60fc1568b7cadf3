// The gateway's own words (src/domain/vocabulary.ts), served as a module by the gateway: never a
// copy here, which fell behind whenever an event type or a scope was added.
import {VOCABULARY} from "../api/vocabulary.js";

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

/** How a person names each channel (presentation only; the list of channels is the gateway's). */
export const CHANNEL_NAMES = {telegram_voice: "Telegram voice", voice_call: "Voice call", sms: "SMS", email: "Email"};
export const CHANNELS = VOCABULARY.channels;
export const PRIORITIES = VOCABULARY.priorities;
/** `suppressed`: held by a maintenance window, nobody paged. */
export const STATUSES = VOCABULARY.statuses;
export const SCOPES = VOCABULARY.scopes;
/** Dashboard users' roles, widest first. */
export const ROLES = VOCABULARY.roles;
export const EVENT_TYPES = VOCABULARY.event_types;

export function channelName(channel) {
  return CHANNEL_NAMES[channel] ?? channel;
}
