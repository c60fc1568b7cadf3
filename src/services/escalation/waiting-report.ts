import type {EscalationEffect} from "../../domain/escalation/index.js";
import type {NotificationRecord, WaitReason} from "../../domain/notification.js";
import type {Logger} from "../../lib/logger.js";

/** A chain's wait before and after one of its wake-ups, with what that wake-up did. */
export interface WaitChange {
  record: NotificationRecord;
  before: WaitReason[] | null;
  after: WaitReason[] | null;
  effects: EscalationEffect[];
}

/** Says loudly when a notification starts waiting for a channel, and when it is carried again. */
export function reportWaiting(logger: Logger, {record, before, after, effects}: WaitChange): void {
  const fields = {notification: record.id, priority: record.priority, source: record.source};
  if (after && !before) {
    // A notifying alert has paged someone already: it is not unreachable, its next step waits.
    const reached = record.status === "notifying";
    logger.warn(
      reached
        ? "an alert waits for a channel for its next step"
        : "an alert cannot reach anyone: it waits for a channel",
      {
        ...fields,
        waiting_for: after
          .map((wait) => (wait.channel === null ? wait.reason : `${wait.channel}: ${wait.reason}`))
          .join("; ")
      }
    );
  } else if (before && !after && effects.some((effect) => effect.type === "attempt")) {
    logger.info("an alert that waited for a channel is being delivered", fields);
  }
}
