import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync
} from "node:fs";
import {dirname} from "node:path";
import type {Adapter} from "lowdb";

/** The config file could not be read at start: names the file and the last good backup. */
export class CorruptConfigError extends Error {
  override name = "CorruptConfigError";
}

function fsyncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeDurably(path: string, text: string): void {
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A lowdb adapter whose writes survive a power cut at any instant: the new text goes to a temp
 * file which is fsynced, the current file is kept as `<file>.bak` (a hard link, so there is no
 * moment without a good file), the temp file is renamed over the original and the directory is
 * fsynced so the rename itself is durable. Reading a file that does not parse is an error that
 * names the file and the backup; it never silently starts empty.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  get backupPath(): string {
    return `${this.path}.bak`;
  }

  private get tempPath(): string {
    return `${this.path}.tmp`;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- lowdb's Adapter wants a promise, and a damaged file must reject it, not throw
  async read(): Promise<T | null> {
    // A temp file left by a crash before its rename never became the config: drop it.
    if (existsSync(this.tempPath)) unlinkSync(this.tempPath);
    if (!existsSync(this.path)) return null;
    const text = readFileSync(this.path, "utf8");
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new CorruptConfigError(
        `config store ${this.path} is not valid JSON (${(error as Error).message}); ${this.backupNote()}. Klaxon will not start on a damaged file: restore it or move it away.`
      );
    }
  }

  /** Where the last good copy is, for a message about a damaged or missing file. */
  backupNote(): string {
    return existsSync(this.backupPath) ? `the last good copy is ${this.backupPath}` : "no backup copy exists";
  }

  write(data: T): Promise<void> {
    const text = JSON.stringify(data, null, 2) + "\n";
    // Writes are serialised: two overlapping writes must not share the temp file.
    const next = this.chain.then(() => this.writeNow(text));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Writes `data` without making the current file the backup: for bookkeeping that is no edit (the
   * journal's record), so `.bak` stays the copy before the last real change. `patchBackup` brings
   * the backup's copy of that bookkeeping up to date, so restoring `.bak` never brings a stale one back.
   */
  writeKeepingBackup(data: T, patchBackup: (backup: T) => T): Promise<void> {
    const next = this.chain.then(() => {
      writeDurably(this.tempPath, JSON.stringify(data, null, 2) + "\n");
      renameSync(this.tempPath, this.path);
      if (existsSync(this.backupPath)) {
        let backup: T;
        try {
          backup = JSON.parse(readFileSync(this.backupPath, "utf8")) as T;
        } catch {
          // A backup that does not parse is no copy anyone restores: leave it as it is.
          return fsyncPath(dirname(this.path), "r");
        }
        const backupTemp = `${this.backupPath}.tmp`;
        writeDurably(backupTemp, JSON.stringify(patchBackup(backup), null, 2) + "\n");
        renameSync(backupTemp, this.backupPath);
      }
      fsyncPath(dirname(this.path), "r");
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private writeNow(text: string): void {
    writeDurably(this.tempPath, text);
    if (existsSync(this.path)) {
      const backupTemp = `${this.backupPath}.tmp`;
      if (existsSync(backupTemp)) unlinkSync(backupTemp);
      linkSync(this.path, backupTemp);
      renameSync(backupTemp, this.backupPath);
    }
    renameSync(this.tempPath, this.path);
    fsyncPath(dirname(this.path), "r");
  }
}
