import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {AttemptRecord} from "../../domain/notification.js";

/** Delivery attempts, one row per channel contact. */
export class AttemptsRepository {
  private readonly forNotificationStatement: Statement;

  constructor(journal: Journal) {
    this.forNotificationStatement = journal.db.prepare(`SELECT * FROM attempts WHERE notification_id = ? ORDER BY started_at, id`);
  }

  forNotification(notificationId: string): AttemptRecord[] {
    return this.forNotificationStatement.all(notificationId) as AttemptRecord[];
  }
}
