import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {AttemptRecord} from "../../domain/notification.js";

const SQL = {
  forNotification: `SELECT * FROM attempts WHERE notification_id = ? ORDER BY started_at, id`,
  insert: `INSERT INTO attempts (id, notification_id, channel, recipient_uuid, target, step, started_at, finished_at, outcome, error)
    VALUES (@id, @notification_id, @channel, @recipient_uuid, @target, @step, @started_at, @finished_at, @outcome, @error)`,
  finish: `UPDATE attempts SET outcome = @outcome, error = @error, finished_at = @finished_at WHERE id = @id AND outcome = 'pending'`,
  unfinished: `SELECT * FROM attempts WHERE outcome = 'pending' ORDER BY started_at, id`,
  confirm: `UPDATE attempts SET outcome = @outcome, error = @error WHERE id = @id AND outcome = 'sent'`,
  ofStep: `SELECT outcome, recipient_uuid FROM attempts WHERE notification_id = ? AND step = ?`,
  byId: `SELECT * FROM attempts WHERE id = ?`
};

/** Delivery attempts, one row per channel contact. A row with outcome `pending` is in flight. */
export class AttemptsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  forNotification(notificationId: string): AttemptRecord[] {
    return this.statements.forNotification.all(notificationId) as AttemptRecord[];
  }

  insert(record: AttemptRecord): void {
    this.statements.insert.run(record);
  }

  /** Records how a pending attempt ended; an attempt already finished is left as it is. */
  finish(id: string, outcome: AttemptRecord["outcome"], error: string | null, finishedAtIso: string): boolean {
    return this.statements.finish.run({id, outcome, error, finished_at: finishedAtIso}).changes === 1;
  }

  /** A channel's later word on a sent attempt (an SMS delivery report); any other outcome stays. */
  confirm(id: string, outcome: "delivered" | "failed", error: string | null): boolean {
    return this.statements.confirm.run({id, outcome, error}).changes === 1;
  }

  /** One step's attempts, skips and deferrals included: how each ended, and whom it was for. */
  ofStep(notificationId: string, step: number): Array<Pick<AttemptRecord, "outcome" | "recipient_uuid">> {
    return this.statements.ofStep.all(notificationId, step) as Array<Pick<AttemptRecord, "outcome" | "recipient_uuid">>;
  }

  get(id: string): AttemptRecord | null {
    return (this.statements.byId.get(id) as AttemptRecord | undefined) ?? null;
  }

  /** Attempts still marked in flight: after a crash, the ones the dead process never finished. */
  unfinished(): AttemptRecord[] {
    return this.statements.unfinished.all() as AttemptRecord[];
  }
}
