import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {EventType} from "../../domain/vocabulary.js";

export interface EventRecord {
  id: string;
  type: EventType;
  notification_id: string | null;
  created_at: string;
  body: string;
  /** Increases per notification: the order its events happened in. */
  sequence: number | null;
}

/** Lifecycle events and their outbox rows, written in the transaction of the change they describe. */
export class EventsRepository {
  private readonly insertEvent: Statement;
  private readonly insertOutbox: Statement;
  private readonly countPending: Statement;
  private readonly lastSequence: Statement;

  constructor(journal: Journal) {
    this.insertEvent = journal.db.prepare(
      `INSERT INTO events (id, type, notification_id, created_at, body, sequence) VALUES (@id, @type, @notification_id, @created_at, @body, @sequence)`
    );
    this.lastSequence = journal.db.prepare(`SELECT MAX(sequence) AS last FROM events WHERE notification_id = ?`);
    this.insertOutbox = journal.db.prepare(
      `INSERT INTO outbox (kind, destination, event_id, status, next_attempt_at, created_at) VALUES (?, ?, ?, 'pending', ?, ?)`
    );
    this.countPending = journal.db.prepare(
      `SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox WHERE status = 'pending'`
    );
  }

  /** Records the event and one pending delivery per destination (webhook subscription id). */
  append(event: EventRecord, destinations: string[]): void {
    this.insertEvent.run(event);
    for (const destination of destinations)
      this.insertOutbox.run("webhook", destination, event.id, event.created_at, event.created_at);
  }

  /** The sequence number the notification's next event takes: one more than its last. */
  nextSequence(notificationId: string): number {
    return ((this.lastSequence.get(notificationId) as {last: number | null}).last ?? 0) + 1;
  }

  backlog(): {pending: number; oldest: string | null} {
    const row = this.countPending.get() as {n: number; oldest: string | null};
    return {pending: row.n, oldest: row.oldest};
  }
}
