import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {EscalationRecord} from "../../domain/notification.js";
import type {PolicySnapshot} from "../../domain/policy.js";
import type {Priority} from "../../domain/vocabulary.js";

const SQL = {
  insert: `INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state, grouped_with)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  byNotification: `SELECT id, notification_id, step, steps_total, next_step_at, generation, state, grouped_with FROM escalations WHERE notification_id = ?`,
  group: `UPDATE escalations SET grouped_with = @anchor, next_step_at = @at, step = @step WHERE notification_id = @notification_id`,
  ungroup: `UPDATE escalations SET grouped_with = NULL WHERE notification_id = ?`,
  release: `UPDATE escalations SET grouped_with = NULL, next_step_at = @now, step = 0 WHERE grouped_with = @anchor AND state = 'running'`,
  policy: `SELECT policy FROM escalations WHERE notification_id = ?`,
  anchorCandidate: `SELECT e.id, e.notification_id, e.step, e.steps_total, e.next_step_at, e.generation, e.state, e.grouped_with, n.priority
    FROM escalations e JOIN notifications n ON n.id = e.notification_id WHERE e.notification_id = ?`,
  stop: `UPDATE escalations SET state = 'stopped', next_step_at = NULL, generation = generation + 1 WHERE notification_id = ? AND state = 'running'`,
  due: `SELECT notification_id FROM escalations WHERE state = 'running' AND next_step_at <= ? ORDER BY next_step_at LIMIT ?`,
  earliest: `SELECT MIN(next_step_at) AS at FROM escalations WHERE state = 'running'`,
  hurry: `UPDATE escalations SET next_step_at = @now WHERE notification_id = @notification_id AND state = 'running' AND step = @step + 1 AND next_step_at > @now`,
  save: `UPDATE escalations SET step = @step, next_step_at = @next_step_at, generation = @generation, state = @state WHERE notification_id = @notification_id`
};

/** Escalation chains: the policy snapshot and the stored next wake-up of each running chain. */
export class EscalationsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;
  /** Counts the updates that can move a running chain (its step, wake-up, state or grouping): a cached chain is current while this stays the same. */
  private chainUpdates = 0;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  insert(record: EscalationRecord, policy: PolicySnapshot): void {
    const {id, notification_id, step, steps_total, next_step_at, generation, state, grouped_with} = record;
    this.statements.insert.run(id, notification_id, JSON.stringify(policy), step, steps_total, next_step_at, generation, state, grouped_with);
  }

  forNotification(notificationId: string): EscalationRecord | null {
    return (this.statements.byNotification.get(notificationId) as EscalationRecord | undefined) ?? null;
  }

  /** A chain with its alert's priority, in one read: what a storm's newcomer is checked against. */
  anchorCandidate(notificationId: string): (EscalationRecord & {priority: Priority}) | null {
    return (this.statements.anchorCandidate.get(notificationId) as (EscalationRecord & {priority: Priority}) | undefined) ?? null;
  }

  policyOf(notificationId: string): PolicySnapshot | null {
    const row = this.statements.policy.get(notificationId) as {policy: string} | undefined;
    return row ? (JSON.parse(row.policy) as PolicySnapshot) : null;
  }

  /** Notifications whose stored wake-up is due at `nowIso`, earliest first. */
  due(nowIso: string, limit: number): string[] {
    return (this.statements.due.all(nowIso, limit) as Array<{notification_id: string}>).map((row) => row.notification_id);
  }

  /** The earliest stored wake-up of any running chain, or null: what the runner's timer aims at. */
  earliestDue(): string | null {
    return (this.statements.earliest.get() as {at: string | null}).at;
  }

  get updates(): number {
    return this.chainUpdates;
  }

  save(record: Pick<EscalationRecord, "notification_id" | "step" | "next_step_at" | "generation" | "state">): void {
    this.chainUpdates++;
    this.statements.save.run(record);
  }

  /** Brings the step after `step` forward to now, if the chain still waits for it (a stale request does nothing). */
  hurry(notificationId: string, step: number, nowIso: string): boolean {
    this.chainUpdates++;
    return this.statements.hurry.run({notification_id: notificationId, step, now: nowIso}).changes > 0;
  }

  /**
   * Stops a running chain; bumping the generation makes any wake-up already scheduled stale.
   * Chains grouped behind it no longer have its next step to wait for: they start their own
   * chain from its first step, now.
   */
  stop(notificationId: string, nowIso: string): void {
    this.chainUpdates++;
    this.statements.stop.run(notificationId);
    this.statements.release.run({anchor: notificationId, now: nowIso});
  }

  /**
   * Makes a chain wait behind `anchor` and join it at its next step: it takes that step's index,
   * so both page on the same channel at the same moment, in one delivery. Not counted in
   * `updates`: the grouped chain waits behind another, so no newcomer joins it.
   */
  group(notificationId: string, anchor: EscalationRecord & {next_step_at: string}): void {
    this.statements.group.run({notification_id: notificationId, anchor: anchor.notification_id, at: anchor.next_step_at, step: anchor.step});
  }

  ungroup(notificationId: string): void {
    this.chainUpdates++;
    this.statements.ungroup.run(notificationId);
  }
}
