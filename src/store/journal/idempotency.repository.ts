import type {Statement} from "better-sqlite3";
import type {Journal} from "./journal.js";

export interface StoredResponse {
  fingerprint: string;
  status: number;
  body: string;
}

/** Responses remembered per (API key, Idempotency-Key), committed with the change they answer. */
export class IdempotencyRepository {
  private readonly findStatement: Statement;
  private readonly insertStatement: Statement;
  private readonly pruneStatement: Statement;

  constructor(journal: Journal) {
    this.findStatement = journal.db
      .prepare(`SELECT fingerprint, response_status AS status, response_body AS body FROM idempotency
      WHERE api_key_id = ? AND idempotency_key = ? AND expires_at > ?`);
    this.insertStatement = journal.db
      .prepare(`INSERT OR REPLACE INTO idempotency (api_key_id, idempotency_key, fingerprint, response_status, response_body, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.pruneStatement = journal.db.prepare(`DELETE FROM idempotency WHERE expires_at <= ?`);
  }

  find(apiKeyId: string, key: string, nowIso: string): StoredResponse | null {
    return (this.findStatement.get(apiKeyId, key, nowIso) as StoredResponse | undefined) ?? null;
  }

  insert(
    apiKeyId: string,
    key: string,
    response: StoredResponse,
    {nowIso, expiresIso}: {nowIso: string; expiresIso: string}
  ): void {
    this.insertStatement.run(apiKeyId, key, response.fingerprint, response.status, response.body, nowIso, expiresIso);
  }

  prune(nowIso: string): number {
    return this.pruneStatement.run(nowIso).changes;
  }
}
