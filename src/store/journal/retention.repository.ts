import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

// Closed (or suppressed by a window already over: it will never page), untouched since the cutoff, and with no webhook delivery still waiting to go out.
const SQL = {
  prunable: `SELECT n.id FROM notifications n
    WHERE (n.status IN ('acknowledged', 'resolved', 'exhausted') OR (n.status = 'suppressed' AND NOT EXISTS
        (SELECT 1 FROM suppressions s JOIN maintenance_windows w ON w.uuid = s.window_uuid WHERE s.notification_id = n.id AND w.released_at IS NULL)))
      AND n.updated_at < @cutoff
      AND NOT EXISTS (SELECT 1 FROM events e JOIN outbox o ON o.event_id = e.id WHERE e.notification_id = n.id AND o.status IN ('pending', 'sending'))
    ORDER BY n.id LIMIT @limit`,
  deliveries: `DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events WHERE notification_id IN (SELECT value FROM json_each(@ids)))`,
  outbox: `DELETE FROM outbox WHERE event_id IN (SELECT id FROM events WHERE notification_id IN (SELECT value FROM json_each(@ids)))`,
  events: `DELETE FROM events WHERE notification_id IN (SELECT value FROM json_each(@ids))`,
  attempts: `DELETE FROM attempts WHERE notification_id IN (SELECT value FROM json_each(@ids))`,
  escalations: `DELETE FROM escalations WHERE notification_id IN (SELECT value FROM json_each(@ids))`,
  notifications: `DELETE FROM notifications WHERE id IN (SELECT value FROM json_each(@ids))`,
  audit: `DELETE FROM audit WHERE seq IN (SELECT seq FROM audit WHERE at < @cutoff ORDER BY at LIMIT @limit)`,
  // Only messages acted on: an unreadable one is still on the SIM, a waiting part still wanted.
  incomingSms: `DELETE FROM inbound_sms WHERE id IN
    (SELECT id FROM inbound_sms WHERE status = 'handled' AND handled_at < @cutoff ORDER BY id LIMIT @limit)`,
  referencing: `SELECT m.name AS table_name, f."from" AS column_name FROM sqlite_master m, pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' AND f."table" = 'notifications'`
};

// Tables whose rows this repository deletes in order; any other table pointing at a
// notification (a channel's own bookkeeping) is found from the schema and cleared first.
const HANDLED = new Set(["events", "attempts", "escalations"]);

/** Deletes old closed notifications with everything that hangs off them, old audit entries and old incoming SMS. */
export class RetentionRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(private readonly journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Up to `limit` notifications that may go; call inside a journal write. */
  prunableNotifications(cutoffIso: string, limit: number): string[] {
    return (this.statements.prunable.all({cutoff: cutoffIso, limit}) as Array<{id: string}>).map((row) => row.id);
  }

  deleteNotifications(ids: string[]): void {
    const list = JSON.stringify(ids);
    for (const {table_name: table, column_name: column} of this.statements.referencing.all() as Array<{
      table_name: string;
      column_name: string;
    }>) {
      if (HANDLED.has(table)) continue;
      this.journal.db.prepare(`DELETE FROM "${table}" WHERE "${column}" IN (SELECT value FROM json_each(?))`).run(list);
    }
    for (const step of ["deliveries", "outbox", "events", "attempts", "escalations", "notifications"] as const)
      this.statements[step].run({ids: list});
  }

  deleteAudit(cutoffIso: string, limit: number): number {
    return this.statements.audit.run({cutoff: cutoffIso, limit}).changes;
  }

  /** Incoming SMS acted on before the cutoff; up to `limit`, inside a journal write. */
  deleteHandledSms(cutoffIso: string, limit: number): number {
    return this.statements.incomingSms.run({cutoff: cutoffIso, limit}).changes;
  }
}
