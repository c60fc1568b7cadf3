/** The kinds of actor, in the order the API documents them. */
export const ACTOR_TYPES = ["api_key", "dashboard", "system", "integration"] as const;

/** Who caused a change: an API key, the dashboard, an integration, or the gateway itself. */
export interface Actor {
  type: (typeof ACTOR_TYPES)[number];
  id: string | null;
}

/** The gateway acting on its own: sweeps, timeouts, self-monitoring, a driver's acknowledgement. */
export const SYSTEM_ACTOR: Actor = Object.freeze({type: "system", id: null});
