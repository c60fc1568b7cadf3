import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {EventType} from "../../domain/vocabulary.js";

/** One attempt to deliver an event to a subscription, as the deliveries log shows it. */
export interface WebhookDelivery {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  started_at: string;
  /** Null while the request is in flight. */
  finished_at: string | null;
  /** The receiver's HTTP status; null when no answer arrived (refused, timed out). */
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
}

/** How an attempt ended. */
export interface DeliveryResult {
  finished_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

const SELECT = `SELECT d.id, d.subscription_id, d.event_id, e.type AS event_type, d.attempt, d.started_at, d.finished_at, d.status_code, d.error, d.duration_ms
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`;

/** The log of webhook delivery attempts: a row when an attempt starts, completed when it ends. */
export class WebhookDeliveriesRepository {
  private readonly statements: Record<"start" | "finish" | "interrupt" | "get" | "page", Statement>;

  constructor(journal: Journal) {
    const db = journal.db;
    this.statements = {
      start: db.prepare(
        `INSERT INTO webhook_deliveries (outbox_seq, subscription_id, event_id, attempt, started_at) VALUES (?, ?, ?, ?, ?)`
      ),
      finish: db.prepare(
        `UPDATE webhook_deliveries SET finished_at = @finished_at, status_code = @status_code, error = @error, duration_ms = @duration_ms WHERE id = @id`
      ),
      interrupt: db.prepare(`UPDATE webhook_deliveries SET finished_at = ?, error = ? WHERE finished_at IS NULL`),
      get: db.prepare(`${SELECT} WHERE d.id = ? AND d.subscription_id = ?`),
      page: db.prepare(
        `${SELECT} WHERE d.subscription_id = @subscription_id AND d.id < @before ORDER BY d.id DESC LIMIT @limit`
      )
    };
  }

  /** Records the start of an attempt; returns the delivery id. */
  start(attempt: {
    outbox_seq: number;
    subscription_id: string;
    event_id: string;
    attempt: number;
    started_at: string;
  }): number {
    return Number(
      this.statements.start.run(
        attempt.outbox_seq,
        attempt.subscription_id,
        attempt.event_id,
        attempt.attempt,
        attempt.started_at
      ).lastInsertRowid
    );
  }

  finish(id: number, result: DeliveryResult): void {
    this.statements.finish.run({id, ...result});
  }

  /** Closes the attempts a crash or a kill left open, so the log never shows them in flight forever. */
  interruptUnfinished(nowIso: string, reason: string): number {
    return this.statements.interrupt.run(nowIso, reason).changes;
  }

  get(subscriptionId: string, id: number): WebhookDelivery | null {
    return (this.statements.get.get(id, subscriptionId) as WebhookDelivery | undefined) ?? null;
  }

  /** Newest first, keyset-paged by id. */
  list(subscriptionId: string, limit: number, beforeId: number | null): WebhookDelivery[] {
    return this.statements.page.all({
      subscription_id: subscriptionId,
      before: beforeId ?? Number.MAX_SAFE_INTEGER,
      limit
    }) as WebhookDelivery[];
  }
}
