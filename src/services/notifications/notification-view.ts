import type {
  AttemptRecord,
  EscalationRecord,
  NotificationRecord,
  RecoveredChange,
  WaitReason
} from "../../domain/notification.js";
import type {LeftOut} from "../../domain/plan-coverage.js";
import type {AttemptOutcome} from "../../domain/vocabulary.js";
import type {AlertSummary} from "../../channels/channel.js";
import {leftOutChannels} from "../../domain/policy.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {MaintenanceWindow} from "../../domain/maintenance.js";
import type {MaintenanceWindowsRepository} from "../../store/journal/maintenance-windows.repository.js";
import type {AttemptsRepository} from "../../store/journal/attempts.repository.js";
import {policyProgress, type PolicyProgressView} from "./policy-progress.js";

/** The long form of a notification (spec 2.2 plus CONTRACT section 2). */
export interface NotificationView {
  id: string;
  status: NotificationRecord["status"];
  recipient_uuid: string;
  message: string;
  priority: NotificationRecord["priority"];
  channels_planned: NotificationRecord["channels_planned"];
  /** Channels the recipients' settings allow that this box has not configured: left out of the plan, so they neither block nor alarm. */
  channels_left_out: Array<LeftOut & {recipient_uuid: string}>;
  escalation_chain_id: string;
  created_at: string;
  links: {self: string; ack: string};
  source: string | null;
  dedup_key: string | null;
  link: string | null;
  service: string | null;
  environment: string | null;
  occurrences: number;
  updated_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  acknowledged_via: NotificationRecord["acknowledged_via"];
  acknowledged_note: string | null;
  resolved_at: string | null;
  escalation: {
    step: number;
    steps_carried: number;
    steps_total: number;
    next_step_at: string | null;
    waiting_for: WaitReason[] | null;
    /** The alert whose paging this one joined (an alert storm): it is paged with it at `next_step_at`. */
    grouped_with: string | null;
    /** For an alert sent to an escalation policy: its levels, whom each paged, and when the next starts. */
    policy?: PolicyProgressView;
  };
  attempts: Array<Omit<AttemptView, "id">>;
  /** The maintenance window that held (or holds) this alert, so a suppressed alert says what suppressed it. */
  maintenance_window: {uuid: string; reason: string; starts_at: string; ends_at: string} | null;
  /** Only on an alert a former active accepted and this box lacked: which of its changes were handed over, from which box. */
  recovered?: RecoveredChange[];
}

/** The short form answered with 202 (spec 2.2). */
export interface NotificationShortView {
  status: NotificationRecord["status"];
  notification_uuid: string;
  channels_planned: NotificationRecord["channels_planned"];
  escalation_chain_id: string;
}

/** Outcomes that reached the person or their phone, or still may: their text is no error. */
const REACHING: ReadonlySet<AttemptOutcome> = new Set(["pending", "sent", "delivered", "answered"]);

/**
 * An attempt as the API and events show it: its step numbered from 1 (the journal counts from 0);
 * `detail` the channel's answer or why it did not reach ("accepted by the SMTP server: 250 OK"),
 * `error` the same text only when the attempt did not reach the person (deprecated, see docs/api.md).
 */
export type AttemptView = Omit<AttemptRecord, "notification_id"> & {detail: string | null};

export function attemptView({notification_id: _notification, error: detail, ...attempt}: AttemptRecord): AttemptView {
  return {...attempt, step: attempt.step + 1, detail, error: REACHING.has(attempt.outcome) ? null : detail};
}

/** The step carried most recently, numbered from 1; 0 while nothing was carried (a storm follower's `current` is its anchor's). */
function stepNumber(escalation: EscalationRecord | null): number {
  if (!escalation?.progress.carried.length || escalation.progress.current === null) return 0;
  return escalation.progress.current + 1;
}

export function notificationPath(id: string): string {
  return `/api/v1/notifications/${id}`;
}

export function longForm(
  record: NotificationRecord,
  escalation: EscalationRecord | null,
  attempts: AttemptRecord[],
  {leftOut = [], recovered = []}: {leftOut?: NotificationView["channels_left_out"]; recovered?: RecoveredChange[]} = {}
): NotificationView {
  const self = notificationPath(record.id);
  return {
    id: record.id,
    status: record.status,
    recipient_uuid: record.target_uuid,
    message: record.message,
    priority: record.priority,
    channels_planned: record.channels_planned,
    channels_left_out: leftOut,
    escalation_chain_id: record.escalation_chain_id,
    created_at: record.created_at,
    links: {self, ack: `${self}/ack`},
    source: record.source,
    dedup_key: record.dedup_key,
    link: record.link,
    service: record.service,
    environment: record.environment,
    occurrences: record.occurrences,
    updated_at: record.updated_at,
    acknowledged_at: record.acknowledged_at,
    acknowledged_by: record.acknowledged_by,
    acknowledged_via: record.acknowledged_via,
    acknowledged_note: record.ack_note,
    resolved_at: record.resolved_at,
    escalation: {
      step: stepNumber(escalation),
      steps_carried: escalation?.step ?? 0,
      steps_total: escalation?.steps_total ?? 0,
      next_step_at: escalation?.next_step_at ?? null,
      waiting_for: escalation?.waiting_for ?? null,
      grouped_with: escalation?.grouped_with ?? null
    },
    attempts: attempts.map((attempt) => {
      const {id: _id, ...shown} = attemptView(attempt);
      return shown;
    }),
    maintenance_window: null,
    ...(recovered.length ? {recovered} : {})
  };
}

export function shortForm(view: NotificationView): NotificationShortView {
  return {
    status: view.status,
    notification_uuid: view.id,
    channels_planned: view.channels_planned,
    escalation_chain_id: view.escalation_chain_id
  };
}

/** An alert as a channel presents it. */
export function alertSummary(record: NotificationRecord): AlertSummary {
  return {
    notification_id: record.id,
    priority: record.priority,
    message: record.message,
    source: record.source,
    link: record.link
  };
}

/** What the long form is read from. */
export interface NotificationViewsDeps {
  escalations: EscalationsRepository;
  attempts: AttemptsRepository;
  windows: Pick<MaintenanceWindowsRepository, "suppressionOf" | "get">;
  /** The changes a former active handed over (docs/high-availability.md, "The tail comes home"). */
  recovered: (notificationId: string) => RecoveredChange[];
}

/** The maintenance window as a suppressed alert names it: which, why, and until when. */
export function heldBy(window: MaintenanceWindow | null): NotificationView["maintenance_window"] {
  return window && {uuid: window.uuid, reason: window.reason, starts_at: window.starts_at, ends_at: window.ends_at};
}

/** Reads the long form of notifications: for the API's answers and for every event's snapshot alike. */
export class NotificationViews {
  constructor(private readonly deps: NotificationViewsDeps) {}

  /** The long form as the journal has it now; call inside a journal transaction or read. */
  of(record: NotificationRecord): NotificationView {
    const {escalations, attempts, windows, recovered} = this.deps;
    const policy = escalations.policyOf(record.id);
    const [chain, tried] = [escalations.forNotification(record.id), attempts.forNotification(record.id)];
    const view = longForm(record, chain, tried, {
      leftOut: policy ? leftOutChannels(policy) : [],
      recovered: recovered(record.id)
    });
    const levels = policy ? policyProgress(policy, chain, tried) : null;
    if (levels) view.escalation.policy = levels;
    const windowUuid = windows.suppressionOf(record.id);
    return windowUuid ? {...view, maintenance_window: heldBy(windows.get(windowUuid))} : view;
  }
}
