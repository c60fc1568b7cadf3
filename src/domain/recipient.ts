import type {Channel, GroupStrategy, Priority} from "./vocabulary.js";

export interface EscalationSettings {
  ack_timeout_seconds: number;
  repeat: number;
  /**
   * After a step whose every attempt failed (busy, no answer, rejected), the next one starts
   * this much later; absent, `retryAfterFailureSeconds` gives the default.
   */
  retry_after_failure_seconds?: number;
}

export interface QuietHours {
  start: string;
  end: string;
  timezone: string;
  allow_priorities: Priority[];
}

export interface RoutingRule {
  priorities: Priority[];
  channels: Channel[];
}

/** A person who can be paged, as stored in the config store. */
export interface Recipient {
  uuid: string;
  name: string;
  telegram_id: string | null;
  phone: string | null;
  email: string | null;
  channel_order: Channel[];
  escalation: EscalationSettings;
  quiet_hours: QuietHours | null;
  routing_rules: RoutingRule[];
  /** The scrypt hash of the PIN SMS commands and calls in must give; absent or null: none. Never shown. */
  command_pin_hash?: string | null;
  created_at: string;
  updated_at: string;
}

/** A set of recipients paged together (parallel) or one after another (sequential). */
export interface Group {
  uuid: string;
  name: string;
  members: string[];
  strategy: GroupStrategy;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_ESCALATION: EscalationSettings = {ack_timeout_seconds: 120, repeat: 1};
const DEFAULT_RETRY_AFTER_FAILURE_SECONDS = 30;

/** The retry wait after a failed step: as set, else 30 s, never longer than the ack timeout. */
export function retryAfterFailureSeconds(escalation: {
  ack_timeout_seconds: number;
  retry_after_failure_seconds?: number;
}): number {
  return (
    escalation.retry_after_failure_seconds ??
    Math.min(DEFAULT_RETRY_AFTER_FAILURE_SECONDS, escalation.ack_timeout_seconds)
  );
}
export const DEFAULT_CHANNEL_ORDER: Channel[] = ["telegram_voice", "voice_call", "email"];
export const DEFAULT_QUIET_ALLOW: Priority[] = ["critical"];

/** The contact field each channel needs. */
export const CHANNEL_CONTACT: Record<Channel, "telegram_id" | "phone" | "email"> = {
  telegram_voice: "telegram_id",
  voice_call: "phone",
  sms: "phone",
  email: "email"
};

const CONTACT_WORDS: Record<"telegram_id" | "phone" | "email", string> = {
  telegram_id: "no Telegram chat id",
  phone: "no phone number",
  email: "no email address"
};

export function contactFor(
  recipient: Pick<Recipient, "telegram_id" | "phone" | "email">,
  channel: Channel
): string | null {
  return recipient[CHANNEL_CONTACT[channel]];
}

/** Why a recipient cannot be reached on a channel, or null when the contact field is there. */
export function missingContactReason(
  recipient: Pick<Recipient, "telegram_id" | "phone" | "email">,
  channel: Channel
): string | null {
  return contactFor(recipient, channel) ? null : CONTACT_WORDS[CHANNEL_CONTACT[channel]];
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", {timeZone: zone});
    return true;
  } catch {
    return false;
  }
}

/** Masks a contact for display in attempts: keeps enough to recognise it, not to use it. */
export function maskContact(value: string): string {
  const at = value.indexOf("@");
  if (at > 0) return `${value[0]}${"*".repeat(Math.max(at - 1, 1))}${value.slice(at)}`;
  if (value.length <= 5) return "*".repeat(value.length);
  const head = value.startsWith("+") ? 3 : 2;
  return value.slice(0, head) + "*".repeat(value.length - head - 3) + value.slice(-3);
}
