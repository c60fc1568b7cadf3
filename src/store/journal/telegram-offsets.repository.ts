import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

const SQL = {
  get: `SELECT next_offset FROM telegram_offsets WHERE bot_id = ?`,
  save: `INSERT INTO telegram_offsets (bot_id, next_offset, updated_at) VALUES (?, ?, ?)
    ON CONFLICT (bot_id) DO UPDATE SET next_offset = excluded.next_offset, updated_at = excluded.updated_at`
};

/**
 * The next getUpdates offset per bot. Keyed by the bot's id (the public part of its token), so
 * a new bot starts from its own beginning instead of skipping updates under an old bot's number.
 */
export class TelegramOffsetsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** The offset to ask for next; 0 (everything Telegram still holds) for a bot never polled. */
  nextOffset(botId: string): number {
    return (this.statements.get.get(botId) as {next_offset: number} | undefined)?.next_offset ?? 0;
  }

  save(botId: string, nextOffset: number, atIso: string): void {
    this.statements.save.run(botId, nextOffset, atIso);
  }
}
