import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

/** Where a part of a concatenated SMS belongs (23.040 §9.2.3.24.1). */
export interface SmsPart {
  reference: number;
  total: number;
  /** 1-based. */
  sequence: number;
}

/** One message from the SIM, as committed before the modem may delete it. */
export interface InboundSmsRecord {
  simIndex: number;
  form: "pdu" | "text";
  /** Exactly what the modem listed: the PDU's hex, or the text-mode header and body. */
  raw: string;
  /** Null when it could not be read; `problem` then says why, and it stays on the SIM. */
  message: {sender: string; body: string; sentAt: string | null; part: SmsPart | null} | null;
  problem: string | null;
  storedAt: string;
}

/** A message (or part) read but not yet acted on. */
export interface WaitingSms {
  id: number;
  storedAt: string;
  sender: string;
  body: string;
  sentAt: string | null;
  part: SmsPart | null;
}

const SQL = {
  insert: `INSERT INTO inbound_sms (stored_at, sim_index, form, raw, status, problem, sender, body, sent_at,
      part_reference, part_total, part_sequence)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sim_index, raw) DO NOTHING`,
  waiting: `SELECT id, stored_at, sender, body, sent_at, part_reference, part_total, part_sequence
    FROM inbound_sms WHERE status = 'waiting' ORDER BY id`,
  handled: `UPDATE inbound_sms SET status = 'handled', handled_at = ? WHERE id = ? AND status = 'waiting'`
};

interface WaitingRow {
  id: number;
  stored_at: string;
  sender: string;
  body: string;
  sent_at: string | null;
  part_reference: number | null;
  part_total: number | null;
  part_sequence: number | null;
}

/**
 * Incoming SMS in the journal. A message is committed here before the modem deletes it from the
 * SIM, so nothing read is ever lost; it is `waiting` until acted on (`handled`), or `unreadable`
 * and kept on the SIM for a person to look at.
 */
export class InboundSmsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Inside a journal write: true when the message is new, false when it was committed before. */
  store(record: InboundSmsRecord): boolean {
    const {message} = record;
    const result = this.statements.insert.run(
      record.storedAt,
      record.simIndex,
      record.form,
      record.raw,
      message ? "waiting" : "unreadable",
      record.problem,
      message?.sender ?? null,
      message?.body ?? null,
      message?.sentAt ?? null,
      message?.part?.reference ?? null,
      message?.part?.total ?? null,
      message?.part?.sequence ?? null
    );
    return result.changes === 1;
  }

  /** Messages and parts read but not yet acted on, oldest first. */
  waiting(): WaitingSms[] {
    return (this.statements.waiting.all() as WaitingRow[]).map((row) => ({
      id: row.id,
      storedAt: row.stored_at,
      sender: row.sender,
      body: row.body,
      sentAt: row.sent_at,
      part:
        row.part_reference === null || row.part_total === null || row.part_sequence === null
          ? null
          : {reference: row.part_reference, total: row.part_total, sequence: row.part_sequence}
    }));
  }

  /** Inside a journal write: these rows were acted on. */
  markHandled(ids: readonly number[], atIso: string): void {
    for (const id of ids) this.statements.handled.run(atIso, id);
  }
}
