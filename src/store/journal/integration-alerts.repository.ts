import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {NotificationStatus} from "../../domain/vocabulary.js";

/** Finds the notification an integration's alert key refers to. */
export class IntegrationAlertsRepository {
  private readonly latestUnresolvedStatement: Statement;
  private readonly anyStatement: Statement;

  constructor(journal: Journal) {
    this.latestUnresolvedStatement = journal.db.prepare(
      `SELECT id, status FROM notifications WHERE dedup_key = ? AND status != 'resolved' ORDER BY id DESC LIMIT 1`
    );
    this.anyStatement = journal.db.prepare(`SELECT 1 FROM notifications WHERE dedup_key = ? LIMIT 1`).pluck();
  }

  /** Whether any notification, in whatever state, carries this dedup key. */
  exists(dedupKey: string): boolean {
    return this.anyStatement.get(dedupKey) !== undefined;
  }

  /** The newest notification with this dedup key that is not resolved (open, acknowledged or exhausted), or null. */
  latestUnresolved(dedupKey: string): {id: string; status: NotificationStatus} | null {
    return (
      (this.latestUnresolvedStatement.get(dedupKey) as {id: string; status: NotificationStatus} | undefined) ?? null
    );
  }
}
