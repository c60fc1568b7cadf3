import type {Statement} from "better-sqlite3";
import type {Journal} from "../store/journal/journal.js";

/** One lifecycle event, as much of it as a page needs to know what to reload. */
export interface FeedEntry {
  seq: number;
  type: string;
  notification_id: string | null;
}

/**
 * Reads the journal's event log in commit order. Every change to a notification (accepted, each
 * attempt, acknowledged, resolved, exhausted) appends an event in its own transaction, whoever
 * made it, so this one log is a complete feed of changes.
 */
export class EventFeedRepository {
  private readonly latest: Statement;
  private readonly since: Statement;

  constructor(private readonly journal: Journal) {
    // events has no sequence column; its rowid grows with every insert (rows are never deleted).
    this.latest = journal.db.prepare(`SELECT COALESCE(MAX(rowid), 0) AS seq FROM events`);
    this.since = journal.db.prepare(
      `SELECT rowid AS seq, type, notification_id FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?`
    );
  }

  lastSeq(): number {
    return this.journal.read(() => (this.latest.get() as {seq: number}).seq);
  }

  after(seq: number, limit: number): FeedEntry[] {
    return this.journal.read(() => this.since.all(seq, limit) as FeedEntry[]);
  }
}
