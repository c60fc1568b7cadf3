import {freshProgress, isOpen, type EscalationRecord, type NotificationRecord} from "../../domain/notification.js";
import {plannedChannels, type PolicySnapshot} from "../../domain/policy.js";
import {countSteps} from "../../domain/escalation/index.js";
import {moreUrgent, type Priority} from "../../domain/vocabulary.js";
import {isoTimestamp} from "../../lib/clock.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {EventPublisher} from "./event-publisher.js";
import type {NotificationView} from "./notification-view.js";

/** What a repeated alert (same dedup key) brings to the notification it merges into. */
export interface Repeat {
  dedup_key: string;
  priority: Priority;
  source: string | null;
}

/** A merge's result: the notification as it is now, and the chain to fire at once when the merge raised it. */
export interface Merged {
  record: NotificationRecord;
  /** The re-planned chain; hand it to the runner after the transaction commits. */
  replanned: EscalationRecord | null;
}

/** What a merge reads and writes, named so the owner of the send path can wire it. */
export interface DedupMergeDependencies {
  notifications: NotificationsRepository;
  escalations: EscalationsRepository;
  audit: AuditService;
  events: EventPublisher;
  /** The policy of the notification's target as configured now: a raise pages under today's rules. */
  policy(uuid: string, priority: Priority, nowMs: number): PolicySnapshot;
  view(record: NotificationRecord): NotificationView;
}

/**
 * The one place a repeated alert merges into the notification that has its dedup key, for the
 * API's send and for integration events alike: occurrences go up and the audit says so. A
 * repeat more urgent than an open notification raises it and starts the new priority's chain
 * from its first step, due now, as a new alert of that priority would page; the notification's
 * own chain is replaced, not run beside a second one. A closed notification (acknowledged,
 * exhausted) is never raised: it has no chain left to re-plan.
 */
export class DedupMerge {
  constructor(private readonly deps: DedupMergeDependencies) {}

  /** Runs inside the caller's journal transaction. */
  merge(into: NotificationRecord, repeat: Repeat, actor: Actor, nowMs: number): Merged {
    const {notifications, audit} = this.deps;
    const now = isoTimestamp(nowMs);
    notifications.bumpOccurrences(into.id, now);
    audit.append(
      actor,
      "notification.deduplicated",
      {type: "notification", id: into.id},
      {dedup_key: repeat.dedup_key, priority: repeat.priority, status: into.status},
      repeat.source
    );
    // PRIORITIES runs from the most urgent down. A held alert (suppressed) is raised too, so its
    // release pages at the priority its sender reached; its stopped chain is not re-planned.
    const raises = (isOpen(into.status) || into.status === "suppressed") && moreUrgent(repeat.priority, into.priority);
    const replanned = raises ? this.raise(into, repeat, actor, nowMs) : null;
    return {record: notifications.get(into.id) as NotificationRecord, replanned};
  }

  private raise(into: NotificationRecord, repeat: Repeat, actor: Actor, nowMs: number): EscalationRecord | null {
    const {notifications, escalations, audit, events} = this.deps;
    const now = isoTimestamp(nowMs);
    const policy = this.deps.policy(into.target_uuid, repeat.priority, nowMs);
    const replanned = escalations.replan(into.id, policy, countSteps(policy), freshProgress(), now);
    notifications.raisePriority(into.id, repeat.priority, plannedChannels(policy), now);
    audit.append(
      actor,
      "notification.priority_raised",
      {type: "notification", id: into.id},
      {from: into.priority, to: repeat.priority, dedup_key: repeat.dedup_key},
      repeat.source
    );
    // Emitted after both rows changed, so the event's snapshot shows the new priority and plan.
    events.emit(
      "notification.priority_raised",
      this.deps.view(notifications.get(into.id) as NotificationRecord),
      nowMs,
      {previous_priority: into.priority}
    );
    return replanned ? escalations.forNotification(into.id) : null;
  }
}
