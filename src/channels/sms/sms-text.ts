import {SINGLE_SMS_LIMIT, smsEncodingFor, smsLength, type SmsEncoding} from "../../modem/sms-codec.js";
import {segmentText} from "../../modem/sms-pdu.js";
import type {AlertSummary} from "../channel.js";
import {byUrgency} from "../storm-listing.js";

/** The alert part and the reply instruction; the instruction is never cut. */
export interface SmsMessage {
  body: string;
  instruction: string;
}

// "(2/3) " in front of every part of a split message: text mode cannot send a concatenation
// header, so each part is its own SMS and says where it belongs.
const PART_PREFIX_CHARS = 6;
const ELLIPSIS = "...";
// A storm's SMS names this many alerts, most urgent first, and counts the rest: the text is cut
// to a few parts anyway, and the count must survive the cut.
const SMS_LISTED_ALERTS = 5;

/** "Klaxon CRITICAL from press-7: Oil temperature high." + "Reply 1 4821 or ACK 4821 to acknowledge." */
export function composeSms(alerts: AlertSummary[], code: string): SmsMessage {
  const instruction = `Reply 1 ${code} or ACK ${code} to acknowledge${alerts.length > 1 ? ` all ${alerts.length}` : ""}.`;
  if (alerts.length === 1) return {body: `Klaxon ${headline(alerts[0])}`, instruction};
  const listed = byUrgency(alerts)
    .slice(0, SMS_LISTED_ALERTS)
    .map((alert, index) => `${index + 1}) ${headline(alert)}`);
  const rest = alerts.length - listed.length;
  const counted =
    rest > 0
      ? `Klaxon: ${alerts.length} alerts (the ${listed.length} most urgent here).`
      : `Klaxon: ${alerts.length} alerts.`;
  return {body: [counted, ...listed].join(" "), instruction};
}

function headline(alert: AlertSummary): string {
  const from = alert.source ? ` from ${flat(alert.source)}` : "";
  const message = flat(alert.message);
  return `${alert.priority.toUpperCase()}${from}: ${/[.!?]$/.test(message) ? message : `${message}.`}`;
}

function flat(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The SMS texts to send: one when it fits, else at most `maxParts` numbered parts, split between
 * words, the alert text shortened (never the instruction) when even that is too long. The
 * encoding is chosen once for the whole message, so every part counts in the same units.
 */
export function planSms(message: SmsMessage, maxParts: number): string[] {
  const encoding = smsEncodingFor(`${message.body} ${message.instruction}`);
  const limit = SINGLE_SMS_LIMIT[encoding];
  const whole = `${message.body} ${message.instruction}`;
  if (smsLength(whole, encoding) <= limit) return [whole];
  const perPart = limit - PART_PREFIX_CHARS;
  let budget = maxParts * perPart;
  for (;;) {
    // The instruction travels as one word, so no part ends in the middle of "Reply 1 4821 or".
    const body = shorten(message.body, budget - smsLength(message.instruction, encoding) - 1, encoding);
    const parts = splitWords([...body.split(" ").filter(Boolean), message.instruction], perPart, encoding);
    if (parts.length <= maxParts) return parts.map((part, index) => `(${index + 1}/${parts.length}) ${part}`);
    // Splitting between words wastes the end of some parts: shrink the body and try again.
    budget -= Math.ceil(perPart / 4);
  }
}

/**
 * PDU mode: the text of one concatenated message of at most `maxParts` SMS (the phone shows it
 * as one), the alert text shortened with "..." when needed, never the reply instruction.
 */
export function planConcatenatedSms(message: SmsMessage, maxParts: number): string {
  const whole = `${message.body} ${message.instruction}`;
  if (segmentText(whole).length <= maxParts) return whole;
  const units = Array.from(message.body);
  const kept = (count: number) => `${units.slice(0, count).join("").trimEnd()}${ELLIPSIS} ${message.instruction}`;
  // The most of the body that fits: fewer characters never need more parts.
  let [low, high] = [0, units.length];
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (segmentText(kept(middle)).length <= maxParts) low = middle;
    else high = middle - 1;
  }
  return kept(low);
}

function shorten(text: string, maxLength: number, encoding: SmsEncoding): string {
  if (smsLength(text, encoding) <= maxLength) return text;
  const units = Array.from(text);
  let keep = Math.max(0, Math.min(units.length, maxLength - ELLIPSIS.length));
  while (keep > 0 && smsLength(units.slice(0, keep).join("") + ELLIPSIS, encoding) > maxLength) keep -= 1;
  return units.slice(0, keep).join("").trimEnd() + ELLIPSIS;
}

// Greedy by words; a word longer than a part is cut between code points (never inside a surrogate pair).
function splitWords(words: string[], perPart: number, encoding: SmsEncoding): string[] {
  const parts: string[] = [];
  let current = "";
  for (let word of words) {
    const candidate = current ? `${current} ${word}` : word;
    if (smsLength(candidate, encoding) <= perPart) {
      current = candidate;
      continue;
    }
    if (current) parts.push(current);
    while (smsLength(word, encoding) > perPart) {
      const units = Array.from(word);
      let cut = units.length;
      while (cut > 1 && smsLength(units.slice(0, cut).join(""), encoding) > perPart) cut -= 1;
      parts.push(units.slice(0, cut).join(""));
      word = units.slice(cut).join("");
    }
    current = word;
  }
  if (current) parts.push(current);
  return parts;
}
