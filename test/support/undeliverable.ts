import type {TestGateway} from "./gateway.js";
import type {WaitReason} from "../../src/domain/notification.js";

export const SMTP_NOT_CONFIGURED: WaitReason = {
  channel: "email",
  reason: "SMTP is not configured (smtp.host and smtp.from)"
};

/**
 * The runner wakes a chain the moment a channel it waits for works: a gateway whose waits are
 * set by hand (on channels that do work) must not look, or it ends them at once.
 */
export const NO_CHANNEL_WATCH = {runner: {channelCheckMs: 24 * 3600_000}};

/**
 * Makes an open notification wait for channels, as the escalation runner records a chain it
 * cannot carry now, without depending on which channels the test gateway has. `null` ends the
 * wait. Start the gateway with NO_CHANNEL_WATCH.
 */
export async function setWaiting(gw: TestGateway, notificationId: string, reasons: WaitReason[] | null): Promise<void> {
  await gw.gateway.services.runner.idle();
  gw.gateway.journal.db
    .prepare("UPDATE escalations SET waiting_for = ? WHERE notification_id = ?")
    .run(reasons && JSON.stringify(reasons), notificationId);
}

/** Sends an alert to the recipient and makes it wait for the channels named; returns its id. */
export async function sendUndeliverable(
  gw: TestGateway,
  recipientUuid: string,
  reasons: WaitReason[] = [SMTP_NOT_CONFIGURED],
  message = "press 4 stopped"
): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipientUuid, message, priority: "high"}
  });
  if (answer.status !== 202) throw new Error(`alert not accepted: ${answer.status} ${JSON.stringify(answer.body)}`);
  await setWaiting(gw, answer.body.notification_uuid, reasons);
  return answer.body.notification_uuid;
}
