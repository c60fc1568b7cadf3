import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {NotificationStatus} from "../../domain/vocabulary.js";

/** Finds the notification an integration's alert key refers to. */
export class IntegrationAlertsRepository {
  private readonly latestUnresolvedStatement: Statement;

  constructor(journal: Journal) {
    this.latestUnresolvedStatement = journal.db.prepare(
      `SELECT id, status FROM notifications WHERE dedup_key = ? AND status != 'resolved' ORDER BY id DESC LIMIT 1`
    );
  }

  /** The newest notification with this dedup key that is not resolved (open, acknowledged or exhausted), or null. */
  latestUnresolved(dedupKey: string): {id: string; status: NotificationStatus} | null {
    return (
      (this.latestUnresolvedStatement.get(dedupKey) as {id: string; status: NotificationStatus} | undefined) ?? null
    );
  }
}
