import type {Actor} from "../../domain/actor.js";
import type {NotificationsService, SendInput, SendOutcome} from "./notifications.service.js";

/**
 * Sends an alert raised inside the gateway (a heartbeat gone down, an integration's event)
 * through the same path as the API's send, so it is deduplicated, audited and escalated alike.
 */
export async function sendAlert(notifications: NotificationsService, input: SendInput, actor: Actor): Promise<SendOutcome> {
  const sent: {outcome?: SendOutcome} = {};
  await notifications.send(input, actor, null, (outcome) => {
    sent.outcome = outcome;
    return {status: 200, body: null};
  });
  if (!sent.outcome) throw new Error("send committed without an outcome");
  return sent.outcome;
}
