import type {AlertSummary} from "../channel.js";
import {andMore, byUrgency, MAX_LISTED_ALERTS} from "../storm-listing.js";
import type {InlineKeyboard, TelegramUser} from "./bot-api-client.js";

/** Telegram's limit for a message text. */
export const MAX_TEXT_CHARS = 4096;
const MAX_BY_CHARS = 128;
const CALLBACK_PREFIX = "ack:";
// One alert of a storm's message at most this long, so one long message cannot hide the others.
const MAX_STORM_BLOCK_CHARS = 600;

function cut(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

function headline(alert: AlertSummary): string {
  return [alert.priority.toUpperCase(), alert.source].filter(Boolean).join(" · ");
}

function block(alert: AlertSummary): string {
  return [headline(alert), alert.message, alert.link].filter(Boolean).join("\n");
}

/**
 * The written message sent with the voice note, in plain text (no parse mode, so nothing in an
 * alert can break the markup). A message held while Telegram was unreachable says since when.
 * A storm's message lists whole alerts, most urgent first, as many as Telegram's limit holds
 * (at most MAX_LISTED_ALERTS), and counts the rest.
 */
export function alertText(alerts: AlertSummary[], heldSince: string | null = null): string {
  const held = heldSince ? `⏳ Held while Telegram was unreachable (since ${heldSince})\n\n` : "";
  if (alerts.length === 1) return cut(`${held}🚨 ${block(alerts[0])}`, MAX_TEXT_CHARS);
  const more = (rest: number) => (rest > 0 ? `\n\n… ${andMore(rest)}: see them all in Klaxon's dashboard` : "");
  let text = `${held}🚨 ${alerts.length} alerts`;
  let shown = 0;
  for (const alert of byUrgency(alerts).slice(0, MAX_LISTED_ALERTS)) {
    const next = `${text}\n\n${shown + 1}. ${cut(block(alert), MAX_STORM_BLOCK_CHARS)}`;
    if ((next + more(alerts.length - shown - 1)).length > MAX_TEXT_CHARS) break;
    text = next;
    shown++;
  }
  return text + more(alerts.length - shown);
}

/** The voice note's caption: who and how urgent, so the chat list says more than "Voice message". */
export function voiceCaption(alerts: AlertSummary[]): string {
  return alerts.length === 1 ? `🚨 ${headline(alerts[0])}` : `🚨 ${alerts.length} alerts`;
}

/** The message once acknowledged: the alert stays readable, the button is gone, the line says who. */
export function acknowledgedText(original: string, by: string): string {
  const line = `\n\n✅ Acknowledged by ${by}`;
  return cut(original, MAX_TEXT_CHARS - line.length) + line;
}

/** The Acknowledge button; its callback_data is a short token (Telegram allows 64 bytes). */
export function acknowledgeKeyboard(token: string): InlineKeyboard {
  return {inline_keyboard: [[{text: "Acknowledge", callback_data: CALLBACK_PREFIX + token}]]};
}

/** The token of an Acknowledge button press, or null for any other callback data. */
export function callbackToken(data: string | undefined): string | null {
  return data?.startsWith(CALLBACK_PREFIX) ? data.slice(CALLBACK_PREFIX.length) || null : null;
}

/** How a Telegram user is named as `acknowledged_by`: "Maria Keller (@maria_k)". */
export function displayName(user: TelegramUser): string {
  const name = [user.first_name, user.last_name].filter(Boolean).join(" ").trim();
  const handle = user.username ? `@${user.username}` : "";
  const shown = name && handle ? `${name} (${handle})` : name || handle || `Telegram user ${user.id}`;
  return cut(shown, MAX_BY_CHARS);
}
