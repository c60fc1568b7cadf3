import type {LinkObservation} from "../connectivity.js";
import {BotApiError} from "./bot-api-client.js";

/**
 * What a failed Bot API call says about the link: no answer means offline, a refused token means
 * refused, and any other answer (flood control, a blocked chat) proves Telegram is reachable.
 * Null for failures that are not the API's (the journal, speech).
 */
export function observationOf(error: unknown): LinkObservation | null {
  if (!(error instanceof BotApiError)) return null;
  if (error.failure === "unreachable") return {ok: false, state: "offline", error: error.message};
  if (error.failure === "unauthorized") return {ok: false, state: "refused", error: error.message};
  return {ok: true};
}
