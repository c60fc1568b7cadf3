import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";
import type {Actor} from "../../domain/actor.js";
import {SqlFilter} from "./sql-filter.js";

export interface AuditEntry {
  seq: number;
  at: string;
  actor: Actor;
  action: string;
  subject: {type: string; id: string};
  source: string | null;
  detail: Record<string, unknown>;
}

export interface AuditFilter {
  action?: string;
  subject_id?: string;
  actor_id?: string;
  before_seq?: number;
  limit: number;
}

interface Row {
  seq: number;
  at: string;
  actor_type: Actor["type"];
  actor_id: string | null;
  action: string;
  subject_type: string;
  subject_id: string;
  source: string | null;
  detail: string;
}

/** The append-only audit log: every accepted alert, state change and admin change. */
export class AuditRepository {
  private readonly appendStatement: Statement;

  constructor(private readonly journal: Journal) {
    this.appendStatement = journal.db
      .prepare(`INSERT INTO audit (at, actor_type, actor_id, action, subject_type, subject_id, source, detail)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  }

  append(entry: Omit<AuditEntry, "seq">): void {
    this.appendStatement.run(
      entry.at,
      entry.actor.type,
      entry.actor.id,
      entry.action,
      entry.subject.type,
      entry.subject.id,
      entry.source,
      JSON.stringify(entry.detail)
    );
  }

  list(filter: AuditFilter): AuditEntry[] {
    const sql = new SqlFilter();
    if (filter.action) sql.add("action = ?", filter.action);
    if (filter.subject_id) sql.add("subject_id = ?", filter.subject_id);
    if (filter.actor_id) sql.add("actor_id = ?", filter.actor_id);
    if (filter.before_seq !== undefined) sql.add("seq < ?", filter.before_seq);
    const rows = this.journal.db
      .prepare(`SELECT * FROM audit ${sql.where} ORDER BY seq DESC LIMIT ?`)
      .all(...sql.params, filter.limit) as Row[];
    return rows.map((row) => ({
      seq: row.seq,
      at: row.at,
      actor: {type: row.actor_type, id: row.actor_id},
      action: row.action,
      subject: {type: row.subject_type, id: row.subject_id},
      source: row.source,
      detail: JSON.parse(row.detail) as AuditEntry["detail"]
    }));
  }
}
