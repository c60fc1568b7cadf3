import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {EscalationProgress, EscalationRecord, WaitReason} from "../../domain/notification.js";
import type {PolicySnapshot} from "../../domain/policy.js";
import type {Channel, Priority} from "../../domain/vocabulary.js";

const COLUMNS = `id, notification_id, step, steps_total, next_step_at, generation, state, grouped_with, progress, waiting_for`;

const SQL = {
  insert: `INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state, grouped_with, progress, waiting_for)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  byNotification: `SELECT ${COLUMNS} FROM escalations WHERE notification_id = ?`,
  group: `UPDATE escalations SET grouped_with = @anchor, next_step_at = @at, progress = json_set(progress, '$.current', @current)
    WHERE notification_id = @notification_id`,
  ungroup: `UPDATE escalations SET grouped_with = NULL WHERE notification_id = ?`,
  // A follower has carried nothing yet (it is ungrouped when it fires): released, it starts its own plan from the first step.
  release: `UPDATE escalations SET grouped_with = NULL, next_step_at = @now, progress = json_set(progress, '$.current', NULL)
    WHERE grouped_with = @anchor AND state = 'running'`,
  policy: `SELECT policy FROM escalations WHERE notification_id = ?`,
  rewritePolicy: `UPDATE escalations SET policy = ? WHERE notification_id = ?`,
  anchorCandidate: `SELECT e.id, e.notification_id, e.step, e.steps_total, e.next_step_at, e.generation, e.state, e.grouped_with, e.progress, e.waiting_for, n.priority, n.target_uuid
    FROM escalations e JOIN notifications n ON n.id = e.notification_id WHERE e.notification_id = ?`,
  stop: `UPDATE escalations SET state = 'stopped', next_step_at = NULL, waiting_for = NULL, generation = generation + 1 WHERE notification_id = ? AND state = 'running'`,
  due: `SELECT notification_id FROM escalations WHERE state = 'running' AND next_step_at <= ? ORDER BY next_step_at LIMIT ?`,
  earliest: `SELECT MIN(next_step_at) AS at FROM escalations WHERE state = 'running' AND next_step_at IS NOT NULL`,
  hurry: `UPDATE escalations SET next_step_at = @at WHERE notification_id = @notification_id AND state = 'running'
    AND json_extract(progress, '$.current') = @step AND next_step_at > @at`,
  hurryFollowers: `UPDATE escalations SET next_step_at = @at WHERE grouped_with = @notification_id AND state = 'running' AND next_step_at > @at`,
  save: `UPDATE escalations SET step = @step, next_step_at = @next_step_at, generation = @generation, state = @state, progress = @progress, waiting_for = @waiting_for
    WHERE notification_id = @notification_id`,
  replan: `UPDATE escalations SET policy = @policy, steps_total = @steps_total, step = 0, progress = @progress, waiting_for = NULL, grouped_with = NULL,
    next_step_at = @now, generation = generation + 1 WHERE notification_id = @notification_id AND state = 'running'`,
  reopen: `UPDATE escalations SET policy = @policy, steps_total = @steps_total, step = 0, progress = @progress, waiting_for = NULL, grouped_with = NULL,
    next_step_at = @now, generation = generation + 1, state = 'running' WHERE notification_id = @notification_id AND state = 'stopped'`,
  uncarry: `UPDATE escalations SET progress = json_set(progress, '$.carried', json((SELECT json_group_array(value) FROM json_each(progress, '$.carried') WHERE value != @step))),
    step = step - 1 WHERE notification_id = @notification_id AND state = 'running' AND EXISTS (SELECT 1 FROM json_each(progress, '$.carried') WHERE value = @step)`,
  waiting: `SELECT waiting_for, step FROM escalations WHERE state = 'running' AND waiting_for IS NOT NULL`,
  wakeWaiting: `UPDATE escalations SET next_step_at = @now WHERE state = 'running' AND waiting_for IS NOT NULL AND next_step_at > @now`
};

interface EscalationRow extends Omit<EscalationRecord, "progress" | "waiting_for"> {
  progress: string;
  waiting_for: string | null;
}

/**
 * Told after a commit that started or stopped a chain (a new alert, a raise, a release; an
 * acknowledgement or resolve): the runner wakes for new work and hangs up on closed alerts, and
 * a heartbeat re-arms when its page closes. They learn it from the chains' stored state, so the
 * service that changed it need not know who is waiting on it.
 */
export interface ChainWatcher {
  /** A chain became due now (`groupedWith`: the chain it waits behind, for one joining a storm). */
  started?(groupedWith: string | null): void;
  /** An alert was acknowledged or resolved; its chain, if it ran, is stopped. */
  stopped?(notificationId: string): void;
}

/** A plan a chain starts afresh under: its policy snapshot, its number of steps, its progress from the start. */
export interface ChainPlan {
  policy: PolicySnapshot;
  stepsTotal: number;
  progress: EscalationProgress;
}

/** What the open chains waiting for a channel add up to: the undeliverable notifications. */
export interface Undeliverable {
  count: number;
  /** Per channel and reason, how many notifications wait for it, and how many of those have already paged someone. */
  reasons: Array<{channel: Channel | null; reason: string; notifications: number; reached: number}>;
}

/** Stored before progress was kept, a chain had carried every step before its `step`. */
function parseProgress(row: EscalationRow): EscalationProgress {
  const stored = JSON.parse(row.progress) as Partial<EscalationProgress>;
  const carried = stored.carried ?? Array.from({length: row.step}, (_, index) => index);
  return {
    carried,
    current: stored.current ?? (carried.length ? carried[carried.length - 1] : null),
    noted: stored.noted ?? {}
  };
}

function fromRow(row: EscalationRow): EscalationRecord {
  return {
    ...row,
    progress: parseProgress(row),
    waiting_for: row.waiting_for === null ? null : (JSON.parse(row.waiting_for) as WaitReason[])
  };
}

/** Escalation chains: the policy snapshot and the stored next wake-up of each running chain. */
export class EscalationsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;
  /** Counts the updates that can move a running chain (its step, wake-up, state or grouping): a cached chain is current while this stays the same. */
  private chainUpdates = 0;
  private readonly watchers: ChainWatcher[] = [];

  constructor(private readonly journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  watch(watcher: ChainWatcher): void {
    this.watchers.push(watcher);
  }

  private startedAfterCommit(groupedWith: string | null): void {
    this.journal.afterCommit(() => {
      for (const watcher of this.watchers) watcher.started?.(groupedWith);
    });
  }

  insert(record: EscalationRecord, policy: PolicySnapshot): void {
    const {
      id,
      notification_id,
      step,
      steps_total,
      next_step_at,
      generation,
      state,
      grouped_with,
      progress,
      waiting_for
    } = record;
    this.statements.insert.run(
      id,
      notification_id,
      JSON.stringify(policy),
      step,
      steps_total,
      next_step_at,
      generation,
      state,
      grouped_with,
      JSON.stringify(progress),
      waiting_for && JSON.stringify(waiting_for)
    );
    // A held alert's chain is stored stopped: its release starts it.
    if (state === "running") this.startedAfterCommit(grouped_with);
  }

  forNotification(notificationId: string): EscalationRecord | null {
    const row = this.statements.byNotification.get(notificationId) as EscalationRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** A chain with its alert's priority and target, in one read: what a storm's newcomer is checked against. */
  anchorCandidate(notificationId: string): (EscalationRecord & {priority: Priority; target_uuid: string}) | null {
    const row = this.statements.anchorCandidate.get(notificationId) as
      (EscalationRow & {priority: Priority; target_uuid: string}) | undefined;
    return row ? {...fromRow(row), priority: row.priority, target_uuid: row.target_uuid} : null;
  }

  /** Stores a chain's policy with the same steps (a policy's level that took its schedules again at its start). */
  rewritePolicy(notificationId: string, policy: PolicySnapshot): void {
    this.statements.rewritePolicy.run(JSON.stringify(policy), notificationId);
  }

  policyOf(notificationId: string): PolicySnapshot | null {
    const row = this.statements.policy.get(notificationId) as {policy: string} | undefined;
    return row ? (JSON.parse(row.policy) as PolicySnapshot) : null;
  }

  /** Notifications whose stored wake-up is due at `nowIso`, earliest first. */
  due(nowIso: string, limit: number): string[] {
    return (this.statements.due.all(nowIso, limit) as Array<{notification_id: string}>).map(
      (row) => row.notification_id
    );
  }

  /** The earliest stored wake-up of any running chain, or null: what the runner's timer aims at. */
  earliestDue(): string | null {
    return (this.statements.earliest.get() as {at: string | null}).at;
  }

  get updates(): number {
    return this.chainUpdates;
  }

  save(
    record: Pick<
      EscalationRecord,
      "notification_id" | "step" | "next_step_at" | "generation" | "state" | "progress" | "waiting_for"
    >
  ): void {
    this.chainUpdates++;
    const {notification_id, step, next_step_at, generation, state, progress, waiting_for} = record;
    this.statements.save.run({
      notification_id,
      step,
      next_step_at,
      generation,
      state,
      progress: JSON.stringify(progress),
      waiting_for: waiting_for && JSON.stringify(waiting_for)
    });
  }

  /**
   * Brings the next step forward to `atIso` when `step` is still the chain's current step and
   * the next one is due later (a stale request does nothing); chains waiting behind it in a
   * storm move with it, so they still page in the same delivery.
   */
  hurry(notificationId: string, step: number, atIso: string): boolean {
    this.chainUpdates++;
    const moved = this.statements.hurry.run({notification_id: notificationId, step, at: atIso}).changes > 0;
    if (moved) this.statements.hurryFollowers.run({notification_id: notificationId, at: atIso});
    return moved;
  }

  /**
   * Stops a running chain; bumping the generation makes any wake-up already scheduled stale.
   * Chains grouped behind it no longer have its next step to wait for: they go on at once.
   */
  stop(notificationId: string, nowIso: string): void {
    this.chainUpdates++;
    this.statements.stop.run(notificationId);
    this.statements.release.run({anchor: notificationId, now: nowIso});
    // Told even when no chain ran (an exhausted or held alert closed): a heartbeat re-arms all the same.
    this.journal.afterCommit(() => {
      for (const watcher of this.watchers) watcher.stopped?.(notificationId);
    });
  }

  /**
   * A new plan for a running chain (a merge raised its priority): progress starts again under
   * the new policy, due now; a wake-up already scheduled becomes stale.
   */
  replan(notificationId: string, {policy, stepsTotal, progress}: ChainPlan, nowIso: string): boolean {
    this.chainUpdates++;
    const changes = this.statements.replan.run({
      notification_id: notificationId,
      policy: JSON.stringify(policy),
      steps_total: stepsTotal,
      progress: JSON.stringify(progress),
      now: nowIso
    }).changes;
    if (changes === 0) return false;
    this.statements.release.run({anchor: notificationId, now: nowIso});
    this.startedAfterCommit(null);
    return true;
  }

  /**
   * Starts a stopped chain afresh under `policy`, from its first step, due now: an alert a
   * maintenance window held pages as a new one would. False when the chain was not stopped.
   */
  reopen(notificationId: string, {policy, stepsTotal, progress}: ChainPlan, nowIso: string): boolean {
    this.chainUpdates++;
    const reopened =
      this.statements.reopen.run({
        notification_id: notificationId,
        policy: JSON.stringify(policy),
        steps_total: stepsTotal,
        progress: JSON.stringify(progress),
        now: nowIso
      }).changes > 0;
    if (reopened) this.startedAfterCommit(null);
    return reopened;
  }

  /**
   * Makes a chain wait behind `anchor` until that chain's next step, and take up its own plan
   * after step `current` (the steps before come after), so both page at the same moment, on the
   * same channel when their plans match: one delivery. Not counted in `updates`: the grouped chain waits behind another, so no
   * newcomer joins it.
   */
  group(notificationId: string, anchor: EscalationRecord & {next_step_at: string}, current: number | null): void {
    this.statements.group.run({
      notification_id: notificationId,
      anchor: anchor.notification_id,
      at: anchor.next_step_at,
      current
    });
  }

  ungroup(notificationId: string): void {
    this.chainUpdates++;
    this.statements.ungroup.run(notificationId);
  }

  /** The step did not really go out after all (its channel failed under it): it is due again. */
  uncarry(notificationId: string, step: number): boolean {
    this.chainUpdates++;
    return this.statements.uncarry.run({notification_id: notificationId, step}).changes > 0;
  }

  /** The open chains waiting for a channel, counted per channel and reason. */
  undeliverable(): Undeliverable {
    const rows = this.statements.waiting.all() as Array<{waiting_for: string; step: number}>;
    const reasons = new Map<string, Undeliverable["reasons"][number]>();
    for (const row of rows) {
      for (const wait of JSON.parse(row.waiting_for) as WaitReason[]) {
        const key = `${wait.channel}\u0000${wait.reason}`;
        const entry = reasons.get(key) ?? {channel: wait.channel, reason: wait.reason, notifications: 0, reached: 0};
        entry.notifications++;
        if (row.step > 0) entry.reached++;
        reasons.set(key, entry);
      }
    }
    return {count: rows.length, reasons: [...reasons.values()]};
  }

  /** A channel may have become usable: every chain waiting for one is due now. */
  wakeWaiting(nowIso: string): number {
    this.chainUpdates++;
    return this.statements.wakeWaiting.run({now: nowIso}).changes;
  }
}
