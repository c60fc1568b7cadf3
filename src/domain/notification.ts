import type {AckVia, AttemptOutcome, Channel, NotificationStatus, Priority} from "./vocabulary.js";

/** A notification as the journal keeps it. Timestamps are ISO 8601 UTC strings. */
export interface NotificationRecord {
  id: string;
  status: NotificationStatus;
  target_uuid: string;
  target_kind: "recipient" | "group" | "schedule" | "policy";
  message: string;
  priority: Priority;
  source: string | null;
  dedup_key: string | null;
  link: string | null;
  service: string | null;
  environment: string | null;
  occurrences: number;
  channels_planned: Channel[];
  escalation_chain_id: string;
  created_at: string;
  updated_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  acknowledged_via: AckVia | null;
  ack_note: string | null;
  resolved_at: string | null;
  api_key_id: string | null;
}

export interface AttemptRecord {
  id: string;
  notification_id: string;
  channel: Channel;
  recipient_uuid: string;
  target: string;
  step: number;
  started_at: string;
  finished_at: string | null;
  outcome: AttemptOutcome;
  error: string | null;
}

/**
 * What an undeliverable notification waits for: a channel its chain cannot use now, and why; or,
 * with `channel` null, no channel at all (a plan with no channel left, everyone a schedule can
 * page in quiet hours), which no channel coming back will end.
 */
export interface WaitReason {
  channel: Channel | null;
  reason: string;
}

/**
 * What every loud signal says of alerts that wait: "cannot reach anyone" only while none of them
 * has paged anyone; once someone was reached, what is actually waiting ("1 alert waits for its
 * voice_call step: the modem is not responding").
 */
export function waitingWords(entry: WaitReason & {notifications: number; reached: number}): string {
  const one = entry.notifications === 1;
  if (entry.reached === 0) return `${entry.notifications} alert${one ? "" : "s"} cannot reach anyone: ${entry.reason}`;
  const waits = `${entry.notifications} alert${one ? " waits" : "s wait"}`;
  if (entry.channel === null) return `${waits}: ${entry.reason}`;
  return `${waits} for ${one ? "its" : "their"} ${entry.channel} step: ${entry.reason}`;
}

/** Which steps of a chain were carried, and which skips were already recorded. */
export interface EscalationProgress {
  /** Steps carried so far (0-based, ascending): at least one attempt reached a driver. */
  carried: number[];
  /** The step carried most recently: the window a failure or a key 9 may cut short. */
  current: number | null;
  /** Per slot (`step/recipient/channel`), the skip or deferral last recorded, so a wait records it once. */
  noted: Record<string, string>;
}

export interface EscalationRecord {
  id: string;
  notification_id: string;
  /** Steps carried so far. */
  step: number;
  steps_total: number;
  next_step_at: string | null;
  generation: number;
  state: "running" | "stopped" | "exhausted";
  /** The chain this one waits behind during an alert storm, or null. */
  grouped_with: string | null;
  progress: EscalationProgress;
  /** Set while the chain waits for a channel (the notification is undeliverable), else null. */
  waiting_for: WaitReason[] | null;
}

/** The progress of a chain that has carried nothing yet. */
export function freshProgress(): EscalationProgress {
  return {carried: [], current: null, noted: {}};
}

export type TransitionResult =
  | {kind: "changed"; record: NotificationRecord}
  | {kind: "unchanged"; record: NotificationRecord}
  | {kind: "conflict"; reason: string};

/** A change a former active accepted and the new active lacked, handed over when the former came back (docs/high-availability.md). */
export interface RecoveredChange {
  change: "accepted" | "acknowledged" | "resolved";
  from_box: string;
  /** The hand-over it came with: the former active's journal, named by the folder it was kept in. */
  hand_over: string;
  recovered_at: string;
}

export interface Acknowledgement {
  by: string | null;
  note: string | null;
  via: AckVia;
}

/**
 * Acknowledge: from queued, notifying or exhausted. Acknowledging twice keeps the first
 * acknowledgement (the call is idempotent); a resolved notification cannot be acknowledged.
 */
export function acknowledge(record: NotificationRecord, ack: Acknowledgement, nowIso: string): TransitionResult {
  if (record.status === "acknowledged") return {kind: "unchanged", record};
  if (record.status === "resolved") return {kind: "conflict", reason: `notification ${record.id} is already resolved`};
  return {
    kind: "changed",
    record: {
      ...record,
      status: "acknowledged",
      acknowledged_at: nowIso,
      acknowledged_by: ack.by,
      acknowledged_via: ack.via,
      ack_note: ack.note,
      updated_at: nowIso
    }
  };
}

/** Resolve: from any state; resolving a resolved notification changes nothing. */
export function resolve(record: NotificationRecord, nowIso: string): TransitionResult {
  if (record.status === "resolved") return {kind: "unchanged", record};
  return {kind: "changed", record: {...record, status: "resolved", resolved_at: nowIso, updated_at: nowIso}};
}

export function isOpen(status: NotificationStatus): boolean {
  return status === "queued" || status === "notifying";
}
