import {freshProgress, isOpen, type NotificationRecord} from "../../domain/notification.js";
import {plannedChannels, type PolicySnapshot} from "../../domain/policy.js";
import {countSteps} from "../../domain/escalation/index.js";
import {moreUrgent, type Priority} from "../../domain/vocabulary.js";
import {isoTimestamp} from "../../lib/clock.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {EventPublisher} from "./event-publisher.js";

/** What a repeated alert (same dedup key) brings to the notification it merges into. */
export interface Repeat {
  dedup_key: string;
  priority: Priority;
  source: string | null;
}

/** What a merge reads and writes, named so the owner of the send path can wire it. */
export interface DedupMergeDependencies {
  notifications: NotificationsRepository;
  escalations: EscalationsRepository;
  audit: AuditService;
  events: EventPublisher;
  /** The policy of the notification's target as configured now: a raise pages under today's rules. */
  policy(uuid: string, priority: Priority, nowMs: number): PolicySnapshot;
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

  /**
   * Runs inside the caller's journal transaction; returns the notification as it is now. A
   * re-planned chain is due at once: the runner hears of it from the journal after the commit.
   */
  merge(into: NotificationRecord, repeat: Repeat, actor: Actor, nowMs: number): NotificationRecord {
    const {notifications, audit} = this.deps;
    const now = isoTimestamp(nowMs);
    notifications.bumpOccurrences(into.id, now);
    audit.append(
      actor,
      "notification.deduplicated",
      {type: "notification", id: into.id, source: repeat.source},
      {dedup_key: repeat.dedup_key, priority: repeat.priority, status: into.status}
    );
    // PRIORITIES runs from the most urgent down. A held alert (suppressed) is raised too, so its
    // release pages at the priority its sender reached; its stopped chain is not re-planned.
    const raises = (isOpen(into.status) || into.status === "suppressed") && moreUrgent(repeat.priority, into.priority);
    if (raises) this.raise(into, repeat, actor, nowMs);
    return notifications.get(into.id) as NotificationRecord;
  }

  private raise(into: NotificationRecord, repeat: Repeat, actor: Actor, nowMs: number): void {
    const {notifications, escalations, audit, events} = this.deps;
    const now = isoTimestamp(nowMs);
    const policy = this.deps.policy(into.target_uuid, repeat.priority, nowMs);
    escalations.replan(into.id, {policy, stepsTotal: countSteps(policy), progress: freshProgress()}, now);
    notifications.raisePriority(into.id, repeat.priority, plannedChannels(policy), now);
    audit.append(
      actor,
      "notification.priority_raised",
      {type: "notification", id: into.id, source: repeat.source},
      {from: into.priority, to: repeat.priority, dedup_key: repeat.dedup_key}
    );
    // Emitted after both rows changed, so the event's snapshot shows the new priority and plan.
    events.emitFor("notification.priority_raised", notifications.get(into.id) as NotificationRecord, nowMs, {
      previous_priority: into.priority
    });
  }
}
