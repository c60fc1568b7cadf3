import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {EventType} from "../../domain/vocabulary.js";

/** A webhook outbox row claimed for sending, with the event it carries. */
export interface ClaimedDelivery {
  seq: number;
  /** The subscription id. */
  destination: string;
  event_id: string;
  event_type: EventType;
  /** The exact bytes that are signed and sent. */
  body: string;
  /** This attempt's number, counting from 1 for this row. */
  attempt: number;
  created_at: string;
}

export type OutboxStatus = "pending" | "sending" | "delivered" | "failed";

// A subscription's head is its oldest row not yet delivered or failed; only a head may be sent,
// so a later event never overtakes an earlier one for the same subscription. A head in
// `sending` blocks its subscription until its attempt is recorded.
const HEAD_OF_SUBSCRIPTION = `o.seq = (SELECT MIN(h.seq) FROM outbox h WHERE h.kind = 'webhook' AND h.destination = o.destination AND h.status IN ('pending', 'sending'))`;
const ENABLED = `o.destination IN (SELECT value FROM json_each(@destinations))`;

/** The webhook rows of the outbox: claimed by compare-and-set, finished or rescheduled after each attempt. */
export class OutboxRepository {
  private readonly statements: Record<
    "due" | "nextDue" | "claim" | "finish" | "failOpen" | "recover" | "requeue",
    Statement
  >;

  constructor(journal: Journal) {
    const db = journal.db;
    this.statements = {
      due: db.prepare(`SELECT o.seq, o.destination, o.event_id, e.type AS event_type, e.body, o.attempts + 1 AS attempt, o.created_at
        FROM outbox o JOIN events e ON e.id = o.event_id
        WHERE o.kind = 'webhook' AND o.status = 'pending' AND o.next_attempt_at <= @now AND ${ENABLED} AND ${HEAD_OF_SUBSCRIPTION}
        ORDER BY o.seq`),
      nextDue: db.prepare(`SELECT MIN(o.next_attempt_at) AS at FROM outbox o
        WHERE o.kind = 'webhook' AND o.status = 'pending' AND ${ENABLED} AND ${HEAD_OF_SUBSCRIPTION}`),
      claim: db.prepare(
        `UPDATE outbox SET status = 'sending', attempts = attempts + 1 WHERE seq = ? AND status = 'pending'`
      ),
      // Only a row still in `sending` is finished: one failed meanwhile (its subscription deleted or gone) stays failed.
      finish: db.prepare(
        `UPDATE outbox SET status = @status, next_attempt_at = COALESCE(@next_attempt_at, next_attempt_at), last_error = @error WHERE seq = @seq AND status = 'sending'`
      ),
      failOpen: db.prepare(
        `UPDATE outbox SET status = 'failed', last_error = ? WHERE kind = 'webhook' AND destination = ? AND status IN ('pending', 'sending')`
      ),
      recover: db.prepare(`UPDATE outbox SET status = 'pending' WHERE kind = 'webhook' AND status = 'sending'`),
      requeue: db.prepare(
        `INSERT INTO outbox (kind, destination, event_id, status, next_attempt_at, created_at) VALUES ('webhook', ?, ?, 'pending', ?, ?)`
      )
    };
  }

  /** Claims every due subscription head (pending → sending); call inside a journal write. */
  claimDue(nowIso: string, enabledSubscriptions: string[]): ClaimedDelivery[] {
    const due = this.statements.due.all({
      now: nowIso,
      destinations: JSON.stringify(enabledSubscriptions)
    }) as ClaimedDelivery[];
    return due.filter((row) => this.statements.claim.run(row.seq).changes === 1);
  }

  /** The earliest time a subscription head becomes due, or null when nothing waits. */
  nextDueAt(enabledSubscriptions: string[]): string | null {
    return (this.statements.nextDue.get({destinations: JSON.stringify(enabledSubscriptions)}) as {at: string | null})
      .at;
  }

  finish(
    seq: number,
    outcome: {status: Exclude<OutboxStatus, "sending">; next_attempt_at?: string; error: string | null}
  ): void {
    this.statements.finish.run({
      seq,
      status: outcome.status,
      next_attempt_at: outcome.next_attempt_at ?? null,
      error: outcome.error
    });
  }

  /** Gives up every undelivered row of a subscription (deleted, or gone at the receiver). */
  failOpen(subscriptionId: string, reason: string): number {
    return this.statements.failOpen.run(reason, subscriptionId).changes;
  }

  /** After a crash, rows caught in `sending` are sent again: delivery is at least once. */
  recoverInterrupted(): number {
    return this.statements.recover.run().changes;
  }

  /** Queues an event again for one subscription, behind what is already waiting for it. */
  requeue(subscriptionId: string, eventId: string, nowIso: string): void {
    this.statements.requeue.run(subscriptionId, eventId, nowIso, nowIso);
  }
}
