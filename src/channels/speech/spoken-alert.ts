import type {AlertSummary} from "../channel.js";

/** Alerts named one by one in a voice note; the rest are counted, so a storm stays a short listen. */
export const MAX_SPOKEN_ALERTS = 5;
/** A message longer than this is cut at a word: the full text is in the written message. */
export const MAX_SPOKEN_MESSAGE_CHARS = 300;

/**
 * Text as a speech engine should read it: a link is said as "link", underscores and dashes
 * between words become pauses, and whitespace collapses.
 */
export function speakable(text: string): string {
  return text
    .replace(/https?:\/\/\S+/g, "link")
    .replace(/(\w)[_-]+(?=\w)/g, "$1 ")
    .replace(/\s+/g, " ")
    .trim();
}

function shortened(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const lastSpace = cut.lastIndexOf(" ");
  return `${(lastSpace > maxChars / 2 ? cut.slice(0, lastSpace) : cut).replace(/[\s.,;:]+$/, "")}, and more`;
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function described(alert: AlertSummary): string {
  const source = alert.source ? `, from ${speakable(alert.source)}` : "";
  return `priority ${alert.priority}${source}: ${sentence(shortened(speakable(alert.message), MAX_SPOKEN_MESSAGE_CHARS))}`;
}

/**
 * What the voice note says for one delivery: each alert's priority, source and message, then how
 * to acknowledge. Several alerts (a storm for one person) are numbered; past MAX_SPOKEN_ALERTS
 * they are counted. The text always starts with a word, never with a dash.
 */
export function spokenAlerts(alerts: AlertSummary[]): string {
  if (alerts.length === 1) {
    return `Klaxon alert, ${described(alerts[0])} Press the Acknowledge button under the message to acknowledge it.`;
  }
  const named = alerts.slice(0, MAX_SPOKEN_ALERTS).map((alert, index) => `Alert ${index + 1}, ${described(alert)}`);
  const rest = alerts.length - named.length;
  const more = rest > 0 ? ` And ${rest} more ${rest === 1 ? "alert" : "alerts"}.` : "";
  return `Klaxon, ${alerts.length} alerts. ${named.join(" ")}${more} Press the Acknowledge button under the message to acknowledge them all.`;
}
