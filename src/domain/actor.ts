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
