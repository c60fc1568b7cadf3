import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {NotificationStatus, Priority} from "../../domain/vocabulary.js";

/** A Telegram message kept while Telegram was unreachable. */
export interface RelayEntry {
  notification_id: string;
  attempt_id: string | null;
  recipient_uuid: string;
  chat_id: string;
  created_at: string;
}

/** A kept message as the relay sees it: with its notification as it stands now. */
export interface PendingRelay extends RelayEntry {
  seq: number;
  status: NotificationStatus;
  priority: Priority;
  message: string;
  source: string | null;
  link: string | null;
}

export type RelayOutcome = "relayed" | "dropped" | "failed";

const SQL = {
  insert: `INSERT INTO telegram_relay (notification_id, attempt_id, recipient_uuid, chat_id, created_at, status)
    VALUES (@notification_id, @attempt_id, @recipient_uuid, @chat_id, @created_at, 'pending')`,
  pending: `SELECT r.seq, r.notification_id, r.attempt_id, r.recipient_uuid, r.chat_id, r.created_at,
      n.status, n.priority, n.message, n.source, n.link
    FROM telegram_relay r JOIN notifications n ON n.id = r.notification_id
    WHERE r.status = 'pending' ORDER BY r.seq`,
  count: `SELECT COUNT(*) AS n FROM telegram_relay WHERE status = 'pending'`,
  finish: `UPDATE telegram_relay SET status = ?, finished_at = ?, error = ? WHERE seq = ? AND status = 'pending'`
};

/** The Telegram relay queue: rows go pending → relayed, dropped (the alert closed meanwhile) or failed. */
export class TelegramRelayRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Call inside the journal write that records the skipped attempt, so both commit or neither. */
  insert(entry: RelayEntry): void {
    this.statements.insert.run(entry);
  }

  /** Every pending row, oldest first. */
  pending(): PendingRelay[] {
    return this.statements.pending.all() as PendingRelay[];
  }

  pendingCount(): number {
    return (this.statements.count.get() as {n: number}).n;
  }

  finish(seq: number, outcome: RelayOutcome, atIso: string, error: string | null): void {
    this.statements.finish.run(outcome, atIso, error, seq);
  }
}
