import {existsSync} from "node:fs";
import Database from "better-sqlite3";
import {prepareAll, type Db, type Journal} from "./journal.js";

/** The active box's heartbeat in the journal: who wrote it, under which epoch, when (ISO). */
export interface Beacon {
  box: string;
  epoch: number;
  written_at: string;
}

const SQL = {
  getDocument: `SELECT body FROM replicated_documents WHERE name = ?`,
  putDocument: `INSERT INTO replicated_documents (name, body) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET body = excluded.body`,
  addDocument: `INSERT INTO replicated_documents (name, body) VALUES (?, ?) ON CONFLICT(name) DO NOTHING`,
  putBeacon: `INSERT INTO replication_beacon (id, box, epoch, written_at) VALUES (1, @box, @epoch, @written_at)
    ON CONFLICT(id) DO UPDATE SET box = excluded.box, epoch = excluded.epoch, written_at = excluded.written_at`
};
const BEACON_SQL = `SELECT box, epoch, written_at FROM replication_beacon WHERE id = 1`;

/**
 * The beacon as a copy of the journal holds it, read through any connection: the standby reads its
 * followed copy (read-only, not a Journal). Null before the first beacon, or in a copy older than the table.
 */
export function readBeacon(db: Db): Beacon | null {
  const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'replication_beacon'`).get();
  return exists ? ((db.prepare(BEACON_SQL).get() as Beacon | undefined) ?? null) : null;
}

/**
 * The beacon in the journal file at `path`, opened read-only beside whoever writes it (the
 * standby's follower, or nobody before a start); null when there is no file or no beacon yet.
 */
export function readBeaconFrom(path: string): Beacon | null {
  if (!existsSync(path)) return null;
  try {
    const db = new Database(path, {readonly: true, fileMustExist: true});
    try {
      return readBeacon(db);
    } finally {
      db.close();
    }
  } catch {
    // A copy the follower is still restoring is not readable yet.
    return null;
  }
}

/** A named document as a journal holds it, read through any connection (a backup's reads); null when absent. */
export function readDocument(db: Db, name: string): string | null {
  return (db.prepare(SQL.getDocument).pluck().get(name) as string | undefined) ?? null;
}

/** Named documents that travel with the journal when two boxes replicate it (the config, the ack-link key, the epoch). */
export class ReplicationRepository {
  private readonly sql;

  constructor(private readonly journal: Journal) {
    this.sql = prepareAll(journal.db, SQL);
    this.sql.getDocument.pluck();
  }

  document(name: string): string | null {
    return this.journal.read(() => (this.sql.getDocument.get(name) as string | undefined) ?? null);
  }

  /** Replaces the document; resolves once the commit is flushed. */
  putDocument(name: string, body: string): Promise<void> {
    return this.journal.write(() => void this.sql.putDocument.run(name, body));
  }

  /** Stores `body` unless the document exists, and resolves with what is stored: the first writer's wins. */
  addDocument(name: string, body: string): Promise<string> {
    return this.journal.write(() => {
      this.sql.addDocument.run(name, body);
      return this.sql.getDocument.get(name) as string;
    });
  }

  writeBeacon(beacon: Beacon): Promise<void> {
    return this.journal.write(() => void this.sql.putBeacon.run(beacon));
  }

  beacon(): Beacon | null {
    return this.journal.read((db) => readBeacon(db));
  }
}
