import type {HeartbeatDefinition, HeartbeatEffect, HeartbeatStatus} from "../../domain/heartbeat.js";
import {SYSTEM_ACTOR} from "../../domain/actor.js";
import {readableTime} from "../../lib/local-time.js";
import type {Logger} from "../../lib/logger.js";
import type {StoredHeartbeatState} from "../../store/journal/heartbeat-states.repository.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import {AppError} from "../shared/errors.js";

const DEDUP_PREFIX = "heartbeat:";

/** The dedup key of a heartbeat's down page: a second page for the same outage merges into the first. */
function heartbeatDedupKey(name: string): string {
  return `${DEDUP_PREFIX}${name}`;
}

/** The heartbeat a page's dedup key names, or null for any other alert. */
export function heartbeatOfDedupKey(dedupKey: string | null): string | null {
  return dedupKey?.startsWith(DEDUP_PREFIX) ? dedupKey.slice(DEDUP_PREFIX.length) : null;
}

/** A heartbeat's state in words, told to whoever closed its page by hand. */
export interface HeartbeatAfterPage {
  name: string;
  status: HeartbeatStatus;
  /** When silence pages again; null when nothing is watched (paused, new). */
  down_at: string | null;
  detail: string;
}

export function stateAfterPage(name: string, status: HeartbeatStatus, downAt: string | null): HeartbeatAfterPage {
  const detail =
    status === "down"
      ? `heartbeat ${name} is still down: its next failure${downAt ? ` or silence past ${downAt}` : ""} pages again`
      : `heartbeat ${name} is ${status}`;
  return {name, status, down_at: downAt, detail};
}

/** The alerts a heartbeat raises when it goes down, and their resolution when it comes back. */
export class HeartbeatPages {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly logger: Logger
  ) {}

  /** Pages the target; null when it cannot (the target was deleted), which is logged. */
  async page(
    definition: HeartbeatDefinition,
    before: StoredHeartbeatState,
    {reason, exit_code}: Extract<HeartbeatEffect, {type: "page"}>
  ): Promise<string | null> {
    // Read by people: the box's wall clock with its zone, not a raw ISO instant (issue 33).
    const lastPing = before.last_ping_at === null ? "never pinged" : `last ping ${readableTime(before.last_ping_at)}`;
    const message =
      reason === "failed"
        ? `Heartbeat ${definition.name} reported a failure${exit_code === undefined ? "" : ` (exit code ${exit_code})`}`
        : `Heartbeat ${definition.name} is down: no ping in time (${lastPing})`;
    try {
      const outcome = await this.notifications.send(
        {
          recipient_uuid: definition.target,
          message,
          priority: definition.priority,
          source: heartbeatDedupKey(definition.name),
          dedup_key: heartbeatDedupKey(definition.name),
          heartbeat: definition.name
        },
        SYSTEM_ACTOR
      );
      return outcome.view.id;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.logger.error("heartbeat is down but its target cannot be paged", {
        heartbeat: definition.name,
        target: definition.target,
        error
      });
      return null;
    }
  }

  async resolve(name: string, notificationId: string): Promise<void> {
    try {
      await this.notifications.resolve(notificationId, SYSTEM_ACTOR);
    } catch (error) {
      // The page may have been removed by retention; there is nothing left to resolve.
      if (!(error instanceof AppError && error.code === "not_found")) throw error;
      this.logger.warn("heartbeat page to resolve no longer exists", {
        heartbeat: name,
        notification_id: notificationId
      });
    }
  }
}
