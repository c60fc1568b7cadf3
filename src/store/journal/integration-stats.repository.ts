import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

/** What became of a message a device integration received. */
export const INTAKE_OUTCOMES = ["accepted", "unmapped", "refused"] as const;
export type IntakeOutcomeName = (typeof INTAKE_OUTCOMES)[number];

/** An integration's counters since it was created (or since the journal was restored). */
export interface IntegrationStats {
  received: number;
  accepted: number;
  refused: number;
  unmapped: number;
  last_event_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
}

/** One counted message: its outcome, when, and the error a refusal gives. */
export interface CountedMessage {
  integrationId: string;
  kind: string;
  outcome: IntakeOutcomeName;
  atIso: string;
  error: string | null;
}

/** A message kept for a person to read: it mapped to nothing, or was refused. */
export interface KeptMessage {
  id: number;
  received_at: string;
  outcome: "unmapped" | "refused";
  origin: string;
  summary: string;
  body: string;
  size: number;
  reason: string | null;
}

/** How many kept messages each integration keeps: the newest, so a noisy device cannot fill the disk. */
export const KEPT_PER_INTEGRATION = 200;

const SQL = {
  count: `INSERT INTO integration_stats (integration_id, kind, received, accepted, refused, unmapped, last_event_at,
      last_error, last_error_at)
    VALUES (@integrationId, @kind, 1, @accepted, @refused, @unmapped, @atIso, @error, @errorAt)
    ON CONFLICT (integration_id) DO UPDATE SET
      received = received + 1, accepted = accepted + @accepted, refused = refused + @refused,
      unmapped = unmapped + @unmapped, last_event_at = @atIso,
      last_error = coalesce(@error, last_error), last_error_at = coalesce(@errorAt, last_error_at)`,
  stats: `SELECT received, accepted, refused, unmapped, last_event_at, last_error, last_error_at
    FROM integration_stats WHERE integration_id = ?`,
  keep: `INSERT INTO integration_log (integration_id, received_at, outcome, origin, summary, body, size, reason)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  trim: `DELETE FROM integration_log WHERE integration_id = @id AND id <=
    (SELECT id FROM integration_log WHERE integration_id = @id ORDER BY id DESC LIMIT 1 OFFSET ${KEPT_PER_INTEGRATION})`,
  kept: `SELECT id, received_at, outcome, origin, summary, body, size, reason FROM integration_log
    WHERE integration_id = ? AND id < ? ORDER BY id DESC LIMIT ?`
} as const;

const NO_STATS: IntegrationStats = {
  received: 0,
  accepted: 0,
  refused: 0,
  unmapped: 0,
  last_event_at: null,
  last_error: null,
  last_error_at: null
};

/** Device integrations' counters and kept messages (journal tables integration_stats and integration_log). */
export class IntegrationStatsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Inside a journal write: counts one message. */
  count(message: CountedMessage): void {
    this.statements.count.run({
      integrationId: message.integrationId,
      kind: message.kind,
      atIso: message.atIso,
      accepted: message.outcome === "accepted" ? 1 : 0,
      refused: message.outcome === "refused" ? 1 : 0,
      unmapped: message.outcome === "unmapped" ? 1 : 0,
      error: message.error,
      errorAt: message.error === null ? null : message.atIso
    });
  }

  /** Inside a journal write: keeps a message, dropping the integration's oldest beyond the bound. */
  keep(integrationId: string, message: Omit<KeptMessage, "id">): void {
    const {received_at, outcome, origin, summary, body, size, reason} = message;
    this.statements.keep.run(integrationId, received_at, outcome, origin, summary, body, size, reason);
    this.statements.trim.run({id: integrationId});
  }

  stats(integrationId: string): IntegrationStats {
    return (this.statements.stats.get(integrationId) as IntegrationStats | undefined) ?? NO_STATS;
  }

  /** Kept messages, newest first, older than `beforeId` when given. */
  kept(integrationId: string, limit: number, beforeId: number | null): KeptMessage[] {
    return this.statements.kept.all(integrationId, beforeId ?? Number.MAX_SAFE_INTEGER, limit) as KeptMessage[];
  }
}
