// One redaction helper for every log line and error detail (DESIGN rule 8). It works on keys
// (anything named like a secret) and on values (anything shaped like one of our secrets), so a
// secret that slips into a message string is caught too.
const SECRET_KEY = /(pass(word)?|secret|token|api[-_]?key|authorization|cookie|^key$|pin$)/i;
export const REDACTED = "[redacted]";

const SECRET_VALUE: Array<[RegExp, string]> = [
  [/klx_[a-z0-9]{8}_[A-Za-z0-9_-]+/g, REDACTED],
  [/whsec_[A-Za-z0-9+/=]+/g, REDACTED],
  [/\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/g, REDACTED], // Telegram bot token
  [/bot\d{6,12}:[A-Za-z0-9_-]+/g, REDACTED],
  // Paths that are credentials themselves: heartbeat ping URLs, emailed acknowledge links, calendar feeds.
  [/(\/(?:ping|ack|ical)\/)[A-Za-z0-9._~-]{16,}/g, `$1${REDACTED}`],
  [/([?&]token=)[^&\s"]+/g, `$1${REDACTED}`],
  // A user name and password written into a URL (http://user:pass@host/).
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"]+@/gi, `$1${REDACTED}@`]
];

export function redactString(text: string): string {
  return SECRET_VALUE.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return "[deep]";
  if (typeof value === "string") return redactString(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Error) return {name: value.name, message: redactString(value.message)};
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = SECRET_KEY.test(key) && item !== null && item !== "" ? REDACTED : redact(item, depth + 1);
    }
    return out;
  }
  return value;
}
