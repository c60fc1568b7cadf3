import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

/** What one Acknowledge button acknowledges, and in which chat it was sent. */
export interface TelegramCallback {
  chat_id: string;
  notification_ids: string[];
}

const SQL = {
  insert: `INSERT INTO telegram_callbacks (token, chat_id, notification_ids, created_at) VALUES (?, ?, ?, ?)`,
  get: `SELECT chat_id, notification_ids FROM telegram_callbacks WHERE token = ?`,
  prune: `DELETE FROM telegram_callbacks WHERE created_at < ?`
};

/**
 * Acknowledge buttons carry only a short random token (callback_data holds at most 64 bytes);
 * what it stands for is kept here, so a press still works after a restart.
 */
export class TelegramCallbacksRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  insert(token: string, callback: TelegramCallback, atIso: string): void {
    this.statements.insert.run(token, callback.chat_id, JSON.stringify(callback.notification_ids), atIso);
  }

  get(token: string): TelegramCallback | null {
    const row = this.statements.get.get(token) as {chat_id: string; notification_ids: string} | undefined;
    return row ? {chat_id: row.chat_id, notification_ids: JSON.parse(row.notification_ids) as string[]} : null;
  }

  /** Forgets buttons older than `beforeIso`; returns how many. */
  prune(beforeIso: string): number {
    return this.statements.prune.run(beforeIso).changes;
  }
}
