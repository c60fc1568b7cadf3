import {isOpen, type NotificationRecord} from "../../../domain/notification.js";
import type {Actor} from "../../../domain/actor.js";
import type {Clock} from "../../../lib/clock.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {Journal} from "../../../store/journal/journal.js";
import type {NotificationsRepository} from "../../../store/journal/notifications.repository.js";
import type {IntegrationAlertsRepository} from "../../../store/journal/integration-alerts.repository.js";
import type {IdempotencyService, IdempotentRequest} from "../../notifications/idempotency.service.js";
import type {NotificationsService} from "../../notifications/notifications.service.js";
import type {HeartbeatsService} from "../../heartbeats/heartbeats.service.js";
import type {InboundAction} from "./integration-payloads.js";

/** What became of one inbound alert. */
export interface EventResult {
  alert_id: string;
  action: InboundAction["action"];
  outcome: "created" | "merged" | "resolved" | "no_open_alert" | "pinged" | "heartbeat_created";
  notification_uuid: string | null;
  heartbeat_status: string | null;
}

/** What the event handler works with. */
export interface IntegrationEventsDeps {
  alerts: IntegrationAlertsRepository;
  notificationRecords: NotificationsRepository;
  notifications: NotificationsService;
  heartbeats: HeartbeatsService;
  idempotency: IdempotencyService;
  journal: Journal;
  clock: Clock;
}

/**
 * Turns an integration's events into notifications, resolutions and heartbeat pings. Every
 * notification goes through the API's send path, with the integration as the actor.
 */
export class IntegrationEvents {
  constructor(private readonly deps: IntegrationEventsDeps) {}

  /**
   * Runs an event's actions in order and reports each one's outcome. A repeat of an event
   * already handled (`repeat`: a signed event's webhook-id) answers the first outcomes again and
   * runs nothing: a sender's retry is harmless, and a captured event replayed within the
   * signature's window cannot resolve an alert that fired again since.
   */
  async handle(
    integration: IntegrationRecord,
    actions: InboundAction[],
    actor: Actor,
    repeat: IdempotentRequest | null
  ): Promise<{results: EventResult[]; replayed: boolean}> {
    const runAll = async () => {
      const results: EventResult[] = [];
      for (const action of actions) results.push(await this.run(integration, action, actor));
      return results;
    };
    if (!repeat) return {results: await runAll(), replayed: false};
    // Stored with the status the route answers, as every remembered answer is.
    const answer = await this.deps.idempotency.runAcross(repeat, async () => ({status: 202, body: await runAll()}));
    return {results: answer.body as EventResult[], replayed: answer.replayed};
  }

  /** Whether the integration's alert key has ever had an alert, open or closed. */
  /**
   * Acknowledges the integration's alert with this id, if one is open: an alarm acknowledged on
   * the device's side (an OPC UA condition acknowledged at the SCADA), with the integration as the actor.
   */
  async acknowledge(integration: IntegrationRecord, alertId: string, by: string, note: string | null): Promise<void> {
    const existing = this.deps.journal.read(() => this.deps.alerts.latestUnresolved(alertKey(integration, alertId)));
    if (!existing || !isOpen(existing.status)) return;
    await this.deps.notifications.acknowledge(
      existing.id,
      {by, note, via: "api"},
      {type: "integration", id: integration.id}
    );
  }

  /** Changes the text of the integration's alert with this id (`change` of its text), if one is not yet resolved; pages nobody. */
  async retitle(integration: IntegrationRecord, alertId: string, change: (message: string) => string): Promise<void> {
    const existing = this.deps.journal.read(() => this.deps.alerts.latestUnresolved(alertKey(integration, alertId)));
    if (existing) await this.deps.notifications.retitle(existing.id, change, {type: "integration", id: integration.id});
  }

  /** Whether the integration has an alert with this id not yet resolved (open, acknowledged or exhausted). */
  unresolved(integration: IntegrationRecord, alertId: string): boolean {
    return this.deps.journal.read(() => this.deps.alerts.latestUnresolved(alertKey(integration, alertId)) !== null);
  }

  /** Who acknowledged the integration's open alert with this id, if a person has (null otherwise). */
  acknowledgement(integration: IntegrationRecord, alertId: string): {by: string | null; note: string | null} | null {
    return this.deps.journal.read(() => {
      const latest = this.deps.alerts.latestUnresolved(alertKey(integration, alertId));
      const record = latest?.status === "acknowledged" ? this.deps.notificationRecords.get(latest.id) : null;
      return record ? {by: record.acknowledged_by, note: record.ack_note} : null;
    });
  }

  known(integration: IntegrationRecord, alertId: string): boolean {
    return this.deps.journal.read(() => this.deps.alerts.exists(alertKey(integration, alertId)));
  }

  private run(integration: IntegrationRecord, action: InboundAction, actor: Actor): Promise<EventResult> {
    switch (action.action) {
      case "fire":
        return this.fire(integration, action, actor);
      case "resolve":
        return this.resolve(integration, action, actor);
      case "heartbeat":
        return this.heartbeat(integration, action, actor);
    }
  }

  /**
   * Fires, or merges into the alert with the same key until that alert is resolved, even after
   * it was acknowledged: a sender repeating a firing alert (Alertmanager does, every
   * repeat_interval) must not page people who are already on it. A repeat of an open alert at a
   * higher severity goes through the send path, which raises the alert and pages at once.
   */
  private async fire(
    integration: IntegrationRecord,
    action: Extract<InboundAction, {action: "fire"}>,
    actor: Actor
  ): Promise<EventResult> {
    const dedupKey = alertKey(integration, action.alert_id);
    const source = action.source ?? integration.name;
    const result = (outcome: EventResult["outcome"], id: string): EventResult => ({
      alert_id: action.alert_id,
      action: "fire",
      outcome,
      notification_uuid: id,
      heartbeat_status: null
    });
    const existing = this.deps.journal.read(() => this.deps.alerts.latestUnresolved(dedupKey));
    if (existing && !isOpen(existing.status)) {
      const absorbed = await this.deps.journal.write(() => {
        const current = this.deps.alerts.latestUnresolved(dedupKey);
        if (!current || isOpen(current.status)) return null;
        // Not open (acknowledged or exhausted): the merge counts the repeat and raises nothing.
        this.deps.notifications.merges.merge(
          this.deps.notificationRecords.get(current.id) as NotificationRecord,
          {dedup_key: dedupKey, priority: action.priority, source},
          actor,
          this.deps.clock.now()
        );
        return current.id;
      });
      if (absorbed) return result("merged", absorbed);
    }
    const outcome = await this.deps.notifications.send(
      {
        recipient_uuid: integration.target,
        message: action.message,
        priority: action.priority,
        source,
        dedup_key: dedupKey,
        ...optional(action)
      },
      actor
    );
    return result(outcome.kind, outcome.view.id);
  }

  private async resolve(
    integration: IntegrationRecord,
    action: Extract<InboundAction, {action: "resolve"}>,
    actor: Actor
  ): Promise<EventResult> {
    const existing = this.deps.journal.read(() =>
      this.deps.alerts.latestUnresolved(alertKey(integration, action.alert_id))
    );
    if (!existing)
      return {
        alert_id: action.alert_id,
        action: "resolve",
        outcome: "no_open_alert",
        notification_uuid: null,
        heartbeat_status: null
      };
    await this.deps.notifications.resolve(existing.id, actor);
    return {
      alert_id: action.alert_id,
      action: "resolve",
      outcome: "resolved",
      notification_uuid: existing.id,
      heartbeat_status: null
    };
  }

  private async heartbeat(
    integration: IntegrationRecord,
    action: Extract<InboundAction, {action: "heartbeat"}>,
    actor: Actor
  ): Promise<EventResult> {
    const pinged = await this.deps.heartbeats.pingOrCreate(action.alert_id, action.period_seconds, integration, actor);
    return {
      alert_id: action.alert_id,
      action: "heartbeat",
      outcome: pinged.created ? "heartbeat_created" : "pinged",
      notification_uuid: null,
      heartbeat_status: pinged.status
    };
  }
}

/** An alert's dedup key, scoped to its integration so two senders' ids never collide. */
function alertKey(integration: IntegrationRecord, alertId: string): string {
  return `${integration.id}:${alertId}`;
}

function optional(action: Extract<InboundAction, {action: "fire"}>): {
  link?: string;
  service?: string;
  environment?: string;
} {
  return Object.fromEntries(
    Object.entries({link: action.link, service: action.service, environment: action.environment}).filter(
      ([, value]) => value !== null
    )
  );
}
