import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

/** What a reply code stands for. */
export interface SmsReplyCode {
  code: string;
  /** The number the code was sent to: only a reply from it counts. */
  contact: string;
  notificationIds: string[];
  expiresAt: string;
}

const SQL = {
  prune: `DELETE FROM sms_reply_codes WHERE expires_at <= ?`,
  taken: `SELECT 1 FROM sms_reply_codes WHERE code = ?`,
  insert: `INSERT INTO sms_reply_codes (code, contact, notification_ids, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
  find: `SELECT code, contact, notification_ids, expires_at FROM sms_reply_codes WHERE code = ? AND expires_at > ?`,
  forExactly: `SELECT code FROM sms_reply_codes WHERE contact = ? AND notification_ids = ? AND expires_at > ?
    ORDER BY expires_at DESC LIMIT 1`
};

/**
 * Short codes people reply with to acknowledge by SMS. A code is unique among the unexpired
 * ones, so a short one suffices; expired codes are dropped whenever a new one is issued.
 */
export class SmsReplyCodesRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Inside a journal write: stores the first candidate not in use and returns it. */
  issue(
    contact: string,
    notificationIds: string[],
    {nowIso, expiresIso}: {nowIso: string; expiresIso: string},
    candidate: (attempt: number) => string
  ): string {
    this.statements.prune.run(nowIso);
    for (let attempt = 0; ; attempt++) {
      const code = candidate(attempt);
      if (this.statements.taken.get(code)) continue;
      this.statements.insert.run(code, contact, JSON.stringify(notificationIds), nowIso, expiresIso);
      return code;
    }
  }

  /** An unexpired code sent to `contact` for exactly these notifications, or null. */
  codeFor(contact: string, notificationIds: string[], nowIso: string): string | null {
    const row = this.statements.forExactly.get(contact, JSON.stringify(notificationIds), nowIso) as
      {code: string} | undefined;
    return row?.code ?? null;
  }

  find(code: string, nowIso: string): SmsReplyCode | null {
    const row = this.statements.find.get(code, nowIso) as
      {code: string; contact: string; notification_ids: string; expires_at: string} | undefined;
    return row
      ? {
          code: row.code,
          contact: row.contact,
          notificationIds: JSON.parse(row.notification_ids) as string[],
          expiresAt: row.expires_at
        }
      : null;
  }
}
