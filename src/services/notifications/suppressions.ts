import {freshProgress, type NotificationRecord} from "../../domain/notification.js";
import {plannedChannels, type PolicySnapshot} from "../../domain/policy.js";
import {countSteps} from "../../domain/escalation/index.js";
import {coveringWindow, releasable, type AlertOrigin, type MaintenanceWindow} from "../../domain/maintenance.js";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import type {Priority} from "../../domain/vocabulary.js";
import {isoTimestamp} from "../../lib/clock.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {HeldAlert, MaintenanceWindowsRepository} from "../../store/journal/maintenance-windows.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import type {EventPublisher} from "./event-publisher.js";
import type {NotificationView} from "./notification-view.js";
import {AppError} from "../shared/errors.js";

/** What holding and releasing alerts reads and writes, named so the send path's owner can wire it. */
export interface SuppressionsDependencies {
  windows: MaintenanceWindowsRepository;
  notifications: NotificationsRepository;
  escalations: EscalationsRepository;
  audit: AuditService;
  events: EventPublisher;
  /** The policy of the alert's recipient, group or schedule as configured now: a released alert pages under today's rules. */
  policy(uuid: string, priority: Priority, nowMs: number): PolicySnapshot;
}

/**
 * Maintenance windows on the paging path: whether a new alert is held (accepted and recorded,
 * nobody paged), and the release of a held alert when its window ends. Every method runs inside
 * the caller's journal transaction.
 */
export class Suppressions {
  constructor(private readonly deps: SuppressionsDependencies) {}

  /** The active window that holds an alert of this origin, or null. */
  windowFor(origin: AlertOrigin, nowMs: number): MaintenanceWindow | null {
    const active = this.deps.windows.activeAt(isoTimestamp(nowMs));
    return active.length ? coveringWindow(active, origin, nowMs) : null;
  }

  /** Records the hold of a notification just inserted as `suppressed`, with its stopped chain. */
  hold(
    view: NotificationView,
    {window, origin}: {window: MaintenanceWindow; origin: AlertOrigin},
    actor: Actor,
    nowMs: number
  ): void {
    this.deps.windows.suppress(view.id, window.uuid, origin.integration, origin.heartbeat);
    this.deps.audit.append(
      actor,
      "notification.suppressed",
      {type: "notification", id: view.id, source: view.source},
      {maintenance_window: window.uuid}
    );
    this.deps.events.emitFirst("notification.suppressed", view, nowMs, {maintenance_window: window.uuid});
  }

  /**
   * The alerts `ended` held, at its end: each still covered by another active window moves to
   * it; each that may still be firing (an integration's, a heartbeat's) pages now as a new alert
   * would; a direct send stays suppressed. Returns how many page again: the runner hears of
   * their chains from the journal once this commits.
   */
  releaseHeld(ended: MaintenanceWindow, nowMs: number): number {
    let reopened = 0;
    for (const held of this.deps.windows.held(ended.uuid)) {
      const origin = originOf(held);
      const next = this.windowFor(origin, nowMs);
      if (next) this.deps.windows.moveTo(held.notification_id, next.uuid);
      else if (releasable(origin)) {
        if (this.release(held.notification_id, ended, nowMs)) reopened++;
      }
    }
    return reopened;
  }

  private release(id: string, ended: MaintenanceWindow, nowMs: number): boolean {
    const {notifications, escalations, audit, events} = this.deps;
    const record = notifications.get(id) as NotificationRecord;
    // Someone is already paged under the same key (sent again after the hold): that page stands for both.
    if (record.dedup_key !== null && notifications.findOpenByDedup(record.target_uuid, record.dedup_key)) return false;
    const now = isoTimestamp(nowMs);
    const policy = this.currentPolicy(record.target_uuid, record.priority, nowMs);
    if (!policy) return false;
    if (!escalations.reopen(id, {policy, stepsTotal: countSteps(policy), progress: freshProgress()}, now)) return false;
    notifications.raisePriority(id, record.priority, plannedChannels(policy), now);
    notifications.saveState({...record, status: "queued", updated_at: now});
    audit.append(
      SYSTEM_ACTOR,
      "notification.released",
      {type: "notification", id, source: record.source},
      {maintenance_window: ended.uuid}
    );
    events.emitFor("notification.released", notifications.get(id) as NotificationRecord, nowMs, {
      maintenance_window: ended.uuid
    });
    return true;
  }

  /** Null when the target was deleted during the window (nothing stops that for a held alert): it stays suppressed. */
  private currentPolicy(uuid: string, priority: Priority, nowMs: number): PolicySnapshot | null {
    try {
      return this.deps.policy(uuid, priority, nowMs);
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
  }
}

function originOf(held: HeldAlert): AlertOrigin {
  return {
    target: held.target_uuid,
    source: held.source,
    integration: held.integration_id,
    heartbeat: held.heartbeat
  };
}
