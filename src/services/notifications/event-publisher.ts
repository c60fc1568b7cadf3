import type {EventType} from "../../domain/vocabulary.js";
import {newId} from "../../lib/ids.js";
import type {EventsRepository} from "../../store/journal/events.repository.js";
import type {Journal} from "../../store/journal/journal.js";
import type {WebhooksRepository} from "../../store/config/repositories.js";
import type {AttemptRecord, NotificationRecord, RecoveredChange} from "../../domain/notification.js";
import type {NotificationView, NotificationViews} from "./notification-view.js";
import {isoTimestamp} from "../../lib/clock.js";

/** A carried escalation step as `escalation.step` announces it: its 1-based number and whom it contacts. */
export interface StepAnnouncement {
  number: number;
  targets: Array<Pick<AttemptRecord, "recipient_uuid" | "channel" | "target">>;
}

/** A level of an escalation policy starting, as `escalation.level` announces it: its 1-based number and run, its targets, whom it pages now. */
export interface LevelAnnouncement {
  number: number;
  run: number;
  targets: Array<{uuid: string; kind: string; name: string; on_call?: string | null}>;
  paged: string[];
}

/** What an event may carry besides the notification's snapshot. */
export interface EventDetail {
  attempt?: Omit<AttemptRecord, "notification_id">;
  step?: StepAnnouncement;
  level?: LevelAnnouncement;
  /** For `notification.priority_raised`: the priority before the raise. */
  previous_priority?: string;
  /** For `notification.suppressed` and `notification.released`: the maintenance window's uuid. */
  maintenance_window?: string;
  /** For `notification.undeliverable`: why, and who found it (the paging auditor, docs/reliability.md). */
  undeliverable?: {reason: string; found_by: "paging_auditor"};
  /** For `notification.recovered`: which change the former active had accepted, and that box. */
  recovered?: RecoveredChange;
}

/** What events are recorded with, by name. */
export interface EventPublisherDeps {
  journal: Journal;
  events: EventsRepository;
  webhooks: WebhooksRepository;
  /** Each event's snapshot of its notification. */
  views: NotificationViews;
  /** Told once queued deliveries have committed, so the webhook dispatcher wakes without polling. */
  onQueued?: () => void;
}

/**
 * The one place lifecycle events (CONTRACT section 7) are recorded, with one outbox row per
 * subscribed webhook, whoever made the change: the notifications service (accepted, merged,
 * held, released, acknowledged, resolved, undeliverable) and the escalation runner (steps,
 * attempts, outcomes, exhaustion) alike. Called inside the journal transaction of the change the
 * event describes, in the order things happened: each event of a notification takes the next
 * `sequence` number.
 */
export class EventPublisher {
  constructor(private readonly deps: EventPublisherDeps) {}

  /** An event showing `record` as the journal has it now, in this transaction. */
  emitFor(type: EventType, record: NotificationRecord, nowMs: number, detail: EventDetail = {}): void {
    this.emit(type, this.deps.views.of(record), nowMs, detail);
  }

  /** An event showing `notification`, a long form already read in this transaction. */
  emit(type: EventType, notification: NotificationView, nowMs: number, detail: EventDetail = {}): void {
    this.record(type, notification, detail, {nowMs, sequence: this.deps.events.nextSequence(notification.id)});
  }

  /**
   * The first event of a notification created in the same write: it has no earlier event, so
   * its sequence is 1 without asking the journal (a query on every accepted alert otherwise).
   */
  emitFirst(type: EventType, notification: NotificationView, nowMs: number, detail: EventDetail = {}): void {
    this.record(type, notification, detail, {nowMs, sequence: 1});
  }

  private record(
    type: EventType,
    notification: NotificationView,
    detail: EventDetail,
    {nowMs, sequence}: {nowMs: number; sequence: number}
  ): void {
    const id = newId("evt", nowMs);
    const createdAt = isoTimestamp(nowMs);
    const body = JSON.stringify({id, type, created_at: createdAt, sequence, data: {notification, ...detail}});
    const destinations = this.deps.webhooks.subscribersOf(type);
    this.deps.events.append(
      {id, type, notification_id: notification.id, created_at: createdAt, body, sequence},
      destinations
    );
    const {onQueued} = this.deps;
    if (destinations.length && onQueued) this.deps.journal.afterCommit(onQueued);
  }
}
