/** The kinds of actor, in the order the API documents them. */
export const ACTOR_TYPES = ["api_key", "dashboard", "system", "integration", "recipient"] as const;

/**
 * Who caused a change: an API key, the dashboard, an integration, the gateway itself, or a
 * recipient (by uuid) acknowledging through a channel: a call, a Telegram button, an SMS reply, an emailed link.
 */
export interface Actor {
  type: (typeof ACTOR_TYPES)[number];
  id: string | null;
}

/** The gateway acting on its own: sweeps, timeouts, self-monitoring, a driver's acknowledgement. */
export const SYSTEM_ACTOR: Actor = Object.freeze({type: "system", id: null});

/** A person acknowledging through a channel, recorded as the recipient the channel reached. */
export function recipientActor(uuid: string): Actor {
  return {type: "recipient", id: uuid};
}

/**
 * `acknowledged_by` for a person who acknowledged from their phone (a key in a call, an SMS reply):
 * their name as the recipient record has it, then the number the channel reached, so the night shift
 * reads who it was and the audit can still tell two people of one name apart.
 */
export function acknowledgerByPhone(name: string, phone: string): string {
  return `${name} (${phone})`;
}
