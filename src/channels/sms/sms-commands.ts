import {SINGLE_SMS_LIMIT, smsEncodingFor, smsLength} from "../../modem/sms-codec.js";
import type {AlertSummary} from "../channel.js";

/** What a text from a known phone asks for. `ack` without a code means the latest alert sent to it. */
export type SmsCommand =
  {kind: "ack"; code: string | null} | {kind: "resolve"; code: string} | {kind: "status"} | {kind: "help"};

// Typed on a phone keyboard at night: any case, blanks anywhere around the words, a final full
// stop. "1 <code>" (the reply the alert SMS suggests) stays, but "14821" is no command.
const COMMANDS: Array<[RegExp, (match: RegExpExecArray) => SmsCommand]> = [
  [/^(?:1 |ACK ?)(\d{4,8})$/, (match) => ({kind: "ack", code: match[1]})],
  [/^ACK$/, () => ({kind: "ack", code: null})],
  [/^RES(?:OLVE)? ?(\d{4,8})$/, (match) => ({kind: "resolve", code: match[1]})],
  [/^STATUS$/, () => ({kind: "status"})],
  [/^(?:HELP|\?)$/, () => ({kind: "help"})]
];

/** The command in an SMS, or null when the text is none. */
export function parseSmsCommand(text: string): SmsCommand | null {
  const flat = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\s*[.!]$/, "")
    .toUpperCase();
  for (const [pattern, command] of COMMANDS) {
    const match = pattern.exec(flat);
    if (match) return command(match);
  }
  return null;
}

export const HELP_REPLY =
  "Klaxon: STATUS lists your open alerts and their codes. ACK <code> acknowledges, ACK alone the latest alert sent to you. RES <code> resolves. HELP shows this.";

export const PIN_REPLY = "Klaxon: PIN missing or wrong. End the command with your PIN, e.g. ACK 4821 <PIN>.";

export const NOT_UNDERSTOOD_REPLY = "Klaxon did not understand that. Send HELP for the commands.";

/** An open alert with the code that acknowledges or resolves it from this phone. */
export interface CodedAlert {
  code: string;
  alert: AlertSummary;
}

// A line of the list is a reminder, not the alert: enough to tell alerts apart.
const MAX_LISTED_MESSAGE_CHARS = 40;

/**
 * "Klaxon: 3 open. 4821 CRITICAL press-7: Oil temp high. 5533 HIGH: Door open. +1 more": as many
 * alerts as fit one SMS (160 GSM 7-bit characters, 70 when a character needs UCS-2), the most
 * recently sent first, and how many did not fit.
 */
export function statusReply(alerts: CodedAlert[]): string {
  if (alerts.length === 0) return "Klaxon: no open alerts sent to you.";
  const header = `Klaxon: ${alerts.length} open.`;
  const lines = alerts.map(({code, alert}) => ` ${code} ${headline(alert)}`);
  const encoding = smsEncodingFor(header + lines.join(""));
  const limit = SINGLE_SMS_LIMIT[encoding];
  let reply = header;
  for (let shown = 0; shown < lines.length; shown++) {
    const rest = lines.length - shown - 1;
    const candidate = reply + lines[shown];
    const more = rest > 0 ? ` +${rest} more` : "";
    if (smsLength(candidate + more, encoding) > limit) return `${reply} +${lines.length - shown} more`;
    reply = candidate;
  }
  return reply;
}

/** "CRITICAL press-7: Oil temperature high." shortened to a reminder. */
export function headline(alert: AlertSummary): string {
  const from = alert.source ? ` ${flat(alert.source, 20)}` : "";
  const message = flat(alert.message, MAX_LISTED_MESSAGE_CHARS);
  return `${alert.priority.toUpperCase()}${from}: ${/[.!?]$/.test(message) ? message : `${message}.`}`;
}

function flat(text: string, maxChars: number): string {
  const units = Array.from(text.replace(/\s+/g, " ").trim());
  return units.length > maxChars ? `${units.slice(0, maxChars - 3).join("")}...` : units.join("");
}

/** "acknowledged 4821 (2 alerts)" or "4821 was already resolved": what a command did, for the reply. */
export function changeReply(
  verb: "acknowledged" | "resolved",
  code: string,
  change: {changed: string[]; alreadyClosed: string[]}
): string {
  if (change.changed.length === 0)
    return change.alreadyClosed.length > 0
      ? `Klaxon: ${code} was already ${verb === "acknowledged" ? "closed" : "resolved"}.`
      : `Klaxon: nothing to do for ${code}; its alerts are gone.`;
  const count = change.changed.length;
  return `Klaxon: ${verb} ${code} (${count} alert${count === 1 ? "" : "s"}).`;
}

export const unknownCodeReply = (code: string) =>
  `Klaxon: code ${code} is unknown or expired. Send STATUS for the current codes.`;
