import {closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, statSync, writeSync} from "node:fs";
import {dirname} from "node:path";
import type {Logger} from "../../lib/logger.js";

/** Beside the journal while a process has it open: `journal.sqlite-open`. */
export const OPEN_MARKER_SUFFIX = "-open";
/** The journal's files, one unit (appended to its name): moved, restored and removed together. */
export const JOURNAL_FILE_SUFFIXES = ["", "-wal", "-shm", OPEN_MARKER_SUFFIX] as const;

/** The journal was not closed cleanly and a file of it is gone: starting would silently drop commits. */
export class WalLossError extends Error {
  override name = "WalLossError";
}

export interface WalGuardOptions {
  logger: Logger;
  /** Start even though the WAL of an unclean stop is missing (main's `--accept-wal-loss`), and say so. */
  acceptWalLoss?: boolean;
}

function fsyncDir(path: string): void {
  const fd = openSync(dirname(path), "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The journal is one unit of three files: `journal.sqlite`, its write-ahead log `-wal` (every
 * commit since the last checkpoint lives only there) and `-shm` (an index SQLite rebuilds). SQLite
 * opens a database whose WAL is gone without a word, as of its last checkpoint. So while the
 * journal is open a marker (`-open`) sits beside it, written once the WAL exists (the directory
 * is fsynced with it, so the WAL's own entry is durable too) and removed only once the WAL is
 * empty at a clean close. A start that finds the marker (an unclean stop) but not the WAL or the
 * database refuses, unless the loss is accepted. Its limits: docs/operations.md, "The data dir's files".
 */
export class WalGuard {
  private held = false;

  private constructor(private readonly path: string) {}

  /** Before SQLite opens `path`: refuses a lost WAL, and creates a new journal file 0600 whatever the umask. */
  static beforeOpen(path: string, options: WalGuardOptions): WalGuard {
    const marker = path + OPEN_MARKER_SUFFIX;
    if (existsSync(marker)) {
      const missing = [path, `${path}-wal`].filter((file) => !existsSync(file));
      if (missing.length) {
        const lost = `journal ${path} was not closed cleanly (${WalGuard.describeMarker(marker)}) and ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} missing: alerts committed since the last checkpoint lived there`;
        if (!options.acceptWalLoss) {
          throw new WalLossError(
            `${lost}. Put the file back and start again; to serve from what remains instead, start once with --accept-wal-loss (docs/operations.md, "The data dir's files")`
          );
        }
        options.logger.error(
          "journal files lost at an unclean stop: serving from what remains, as --accept-wal-loss asked",
          {journal: path, missing}
        );
      }
    }
    // SQLite gives the -wal and -shm files the database file's own mode.
    if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
    return new WalGuard(path);
  }

  private static describeMarker(marker: string): string {
    const pid = readFileSync(marker, "utf8").trim();
    return `process ${pid || "?"} had it open since ${statSync(marker).mtime.toISOString()}`;
  }

  private get marker(): string {
    return this.path + OPEN_MARKER_SUFFIX;
  }

  /** Once the journal is open in WAL mode and its WAL file exists. */
  hold(): void {
    const fd = openSync(this.marker, "w", 0o600);
    try {
      writeSync(fd, `${process.pid}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDir(this.path);
    this.held = true;
  }

  /** At a clean close: drops the marker once the WAL holds nothing the database file lacks (empty or gone), and says whether it does. */
  releaseIfWalEmpty(): boolean {
    const wal = `${this.path}-wal`;
    if (existsSync(wal) && statSync(wal).size > 0) return false;
    if (this.held) {
      rmSync(this.marker, {force: true});
      fsyncDir(this.path);
      this.held = false;
    }
    return true;
  }
}
