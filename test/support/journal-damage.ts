import {closeSync, openSync, writeSync} from "node:fs";
import Database from "better-sqlite3";

/**
 * Overwrites the root page of `table` in the journal file at `path`, as a bad sector would, open
 * or not. Its own connection first folds the WAL in (so the file is what SQLite reads), and after
 * the damage makes a harmless commit: a gateway that has the journal open drops the pages it holds
 * in memory and reads the file again, damage and all.
 */
export function damageTablePage(path: string, table: string): void {
  const db = new Database(path);
  try {
    const [checkpoint] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{busy: number}>;
    if (checkpoint.busy !== 0) throw new Error(`${path}: the WAL could not be folded in`);
    const pageSize = db.pragma("page_size", {simple: true}) as number;
    const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = ?").pluck().get(table) as number;
    const fd = openSync(path, "r+");
    try {
      writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (root - 1) * pageSize);
    } finally {
      closeSync(fd);
    }
    db.pragma(`user_version = ${db.pragma("user_version", {simple: true}) as number}`);
  } finally {
    db.close();
  }
}
