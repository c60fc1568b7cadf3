import type Database from "better-sqlite3";

type Db = Database.Database;

/** Who a journal is: the id made with it, and the commits it had made at its last seal. */
export interface JournalIdentity {
  id: string;
  commits: number;
}

/**
 * A start refused because the journal is not the one the config store last saw (missing, empty,
 * foreign, older, its WAL lost) or is damaged: exit 78 until someone acts (docs/operations.md).
 */
export class JournalRefusedError extends Error {
  override name = "JournalRefusedError";
}

const SQL = {
  get: "SELECT id, commits FROM journal_identity WHERE singleton = 1",
  seal: "UPDATE journal_identity SET commits = commits + ? WHERE singleton = 1"
} as const;

/** The journal's identity as its migration made it; null for a journal older than that migration. */
export function readIdentity(db: Db): JournalIdentity | null {
  return (db.prepare(SQL.get).get() as JournalIdentity | undefined) ?? null;
}

/** Counts `commits` more into the journal's own total, in the caller's transaction. */
export function sealCommits(db: Db, commits: number): void {
  db.prepare(SQL.seal).run(commits);
}
