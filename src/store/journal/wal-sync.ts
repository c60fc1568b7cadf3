import {closeSync, fsync, fsyncSync, openSync} from "node:fs";
import {dirname} from "node:path";

/** How a file descriptor is flushed to the medium; `fs.fsync` (the libuv thread pool) unless a test holds it back. */
export type FsyncFunction = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

/** Told when the syncs it waited for are done: null once its commit is on the medium, else why not. */
export type SyncWaiter = (error: Error | null) => void;

/**
 * Makes committed WAL frames durable off the main thread. SQLite with synchronous=FULL would
 * fsync the WAL inside COMMIT, holding the one JavaScript thread for the whole flush (on an SD
 * card, milliseconds per commit); with synchronous=NORMAL it writes the frames and returns, and
 * this flushes the same file through its own descriptor on the thread pool (fsync flushes the
 * file, whichever descriptor names it). A commit's writers hear of it only once a sync begun after
 * that commit has finished, so every acknowledged write is on the medium, as with FULL. At most
 * one sync runs at a time: the commits made while it runs share the next one (group commit again,
 * one level down).
 */
export class WalSync {
  private fd: number | null = null;
  private running = false;
  /** Commits made since the running sync began: the next sync covers them. */
  private waiting: SyncWaiter[] = [];
  /** Syncs done, for the group-commit figures. */
  syncs = 0;

  constructor(
    private readonly walPath: string,
    private readonly flush: FsyncFunction = fsync
  ) {}

  /** Call after a COMMIT: `waiter` is told once that commit is durable (or that it may not be). */
  afterCommit(waiter: SyncWaiter): void {
    this.waiting.push(waiter);
    if (!this.running) this.start();
  }

  /** True while a commit waits for its sync. */
  get pending(): boolean {
    return this.running || this.waiting.length > 0;
  }

  /** Closes the descriptor; call once nothing is pending. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private start(): void {
    const covered = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      fd = this.descriptor();
    } catch (error) {
      for (const waiter of covered) waiter(error as Error);
      return;
    }
    this.running = true;
    this.flush(fd, (error) => {
      this.running = false;
      this.syncs++;
      for (const waiter of covered) waiter(error);
      if (this.waiting.length > 0) this.start();
    });
  }

  // Opened at the first commit, when the WAL file surely exists; the directory is flushed once
  // too, as SQLite does for a file it created, so the WAL's own entry survives a power cut.
  private descriptor(): number {
    if (this.fd !== null) return this.fd;
    this.fd = openSync(this.walPath, "r");
    const directory = openSync(dirname(this.walPath), "r");
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
    return this.fd;
  }
}
