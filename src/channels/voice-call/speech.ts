import type {AlertSummary} from "../channel.js";

/** The keys a callee presses; configurable (modem.ack_key, repeat_key, pass_key). */
export interface CallKeys {
  acknowledge: string;
  repeat: string;
  passOn: string;
}

// A call is for getting someone to the alert, not for reading it out: long messages are cut and
// a storm is summed up, so the prompt comes before the callee gives up listening.
const MAX_SPOKEN_MESSAGE_CHARS = 300;
const MAX_SPOKEN_ALERTS = 5;

const PRIORITY_WORDS: Record<AlertSummary["priority"], string> = {
  critical: "Critical",
  high: "High priority",
  medium: "Medium priority",
  low: "Low priority",
  info: "Information"
};

export const CONFIRMATION_SPEECH = "Acknowledged. Thank you. Goodbye.";
export const PASSED_ON_SPEECH = "Passing it on to the next person. Goodbye.";

/** "Klaxon alert. Critical. From press-7. Oil temperature high." or "Klaxon: 3 alerts. Alert 1: ..." */
export function alertSpeech(alerts: AlertSummary[]): string {
  if (alerts.length === 1) return `Klaxon alert. ${describe(alerts[0])}`;
  const spoken = alerts.slice(0, MAX_SPOKEN_ALERTS).map((alert, index) => `Alert ${index + 1}: ${describe(alert)}`);
  const more = alerts.length - spoken.length;
  return [`Klaxon: ${alerts.length} alerts.`, ...spoken, ...(more > 0 ? [`And ${more} more.`] : [])].join(" ");
}

/** "Press 1 to acknowledge, 2 to hear it again, 9 to pass it on." */
export function promptSpeech(keys: CallKeys): string {
  return `Press ${spokenKey(keys.acknowledge)} to acknowledge, ${spokenKey(keys.repeat)} to hear it again, ${spokenKey(keys.passOn)} to pass it on.`;
}

/** "Klaxon. You have 2 open alerts. Alert 1 of 2. Critical. From press-7. ... Press 1 to acknowledge, 2 for the next." */
export function calledInSpeech(alert: AlertSummary, index: number, total: number, keys: CallKeys): string {
  const intro = index === 0 ? `Klaxon. You have ${total} open alert${total === 1 ? "" : "s"}. ` : "";
  const prompt = `Press ${spokenKey(keys.acknowledge)} to acknowledge, ${spokenKey(keys.repeat)} for the next.`;
  return `${intro}Alert ${index + 1} of ${total}. ${describe(alert)} ${prompt}`;
}

export const NO_OPEN_ALERTS_SPEECH = "Klaxon. You have no open alerts. Goodbye.";
export const CALLED_IN_DONE_SPEECH = "No more open alerts. Goodbye.";
export const ACKNOWLEDGED_SPEECH = "Acknowledged.";

function describe(alert: AlertSummary): string {
  const parts = [`${PRIORITY_WORDS[alert.priority]}.`];
  if (alert.source) parts.push(`From ${sentence(alert.source, 80).replace(/[.!?]$/, "")}.`);
  parts.push(sentence(alert.message, MAX_SPOKEN_MESSAGE_CHARS));
  return parts.join(" ");
}

// One line of speech: whitespace folded, cut at a word when too long, ending in a full stop.
function sentence(text: string, maxChars: number): string {
  let flat = text.replace(/\s+/g, " ").trim();
  if (flat.length > maxChars) flat = flat.slice(0, maxChars).replace(/\s+\S*$/, "") + " ...";
  return /[.!?]$/.test(flat) ? flat : `${flat}.`;
}

function spokenKey(key: string): string {
  if (key === "*") return "star";
  if (key === "#") return "hash";
  return key;
}

export const PIN_SPEECH = "Klaxon. Please enter your PIN, then the hash key.";
export const WRONG_PIN_SPEECH = "Wrong PIN. Goodbye.";
