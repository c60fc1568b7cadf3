import Database from "better-sqlite3";
import {MIGRATIONS, NewerJournalError} from "./migrations.js";
import {Checkpointer} from "./checkpointer.js";
import {WalGuard} from "./wal-guard.js";
import {WalSync, type FsyncFunction} from "./wal-sync.js";
import {isDamage, isStorageError, StorageUnavailableError} from "./storage-errors.js";

export {StorageUnavailableError};
import type {Logger} from "../../lib/logger.js";

export type Db = Database.Database;

/** Prepares a table of named SQL statements once, so each query is written in one place. */
export function prepareAll<K extends string>(db: Db, sql: Record<K, string>): Record<K, Database.Statement> {
  return Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, db.prepare(text as string)])) as Record<
    K,
    Database.Statement
  >;
}

export interface JournalOptions {
  path: string;
  logger: Logger;
  /** How often the background checkpointer folds the WAL into the main file. */
  checkpointIntervalMs?: number;
  /** Most writes in one group commit. */
  maxBatch?: number;
  /** Open even though the WAL of an unclean stop is missing (see WalGuard). */
  acceptWalLoss?: boolean;
  /** How the WAL is flushed to the medium (tests hold it back to see who waits for it). */
  fsync?: FsyncFunction;
  /**
   * Litestream ships the WAL (replication.role active): Klaxon runs no checkpoint of its own, not
   * even at close, since one could fold frames into the database file before Litestream read them;
   * Litestream checkpoints once it has shipped them.
   */
  replicated?: boolean;
}

/** Told around a clean close: `beforeClose` may still write; `closedCleanly` once the WAL holds nothing the file lacks. */
export interface JournalCloseListener {
  beforeClose(): Promise<void>;
  closedCleanly(): Promise<void>;
}

/** A write's result; a committed one carries the effects it registered with `afterCommit`. */
type Outcome = {ok: true; value: unknown; effects: AfterCommitEffect[]} | {ok: false; error: unknown};

/** An effect on memory (a cache, a wake-up, a log line) that must follow the commit of the write that registered it. */
export type AfterCommitEffect = () => void;

interface PendingWrite {
  work: (db: Db) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The durable journal on SQLite (WAL). Writes go through `write()`, which queues them;
 * everything queued while the previous commit ran is committed together in one transaction
 * (group commit), and a write resolves once its commit is flushed to the medium (`WalSync`, off
 * the main thread), so many concurrent requests share one fsync. A write that throws
 * fails alone: its caller gets the error, its neighbours commit, none of its changes remain.
 * A write function may run twice, so its effects on memory go through `afterCommit` (the
 * contract: docs/architecture.md, "The journal"). Checkpoints run on a worker thread with its
 * own connection, never on the request path.
 */
export class Journal {
  readonly db: Db;
  private queue: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly maxBatch: number;
  /** Null when Litestream ships the WAL; its thread is let go while the journal is idle. */
  readonly checkpointer: Checkpointer | null;
  private readonly walGuard: WalGuard;
  private readonly walSync: WalSync;
  // Prepared once: db.exec would parse these statements again for every queued write.
  private readonly savepoint: Record<"begin" | "release" | "rollback", Database.Statement>;
  private readonly changeCounter: Database.Statement;
  private closed = false;
  /** The first damage SQLite reported (SQLITE_CORRUPT, SQLITE_NOTADB) on a commit or a read; it stays. */
  private damageSeen: string | null = null;
  private closeListener: JournalCloseListener | null = null;
  /** Set by a commit that failed for lack of storage; cleared by the next commit that succeeds with room to grow. */
  private storageFailing = false;
  /** Commits and the writes they carried (writes/commits is the group-commit factor), and batches replayed isolated. */
  readonly stats = {commits: 0, writes: 0, replays: 0};

  /** Flushes of the WAL to the medium: commits/syncs is how many commits each flush carried. */
  get syncs(): number {
    return this.walSync.syncs;
  }
  /** Bumped by every transaction begun (replays too) and every write rolled back: see `cacheEpoch`. */
  private epoch = 0;
  /** The effects registered by the write function running now; null between runs. */
  private running: AfterCommitEffect[] | null = null;
  /**
   * Tests: every batch takes the replay path, its first run rolled back as a sibling write that
   * fails after changing rows causes, so every write function runs twice.
   */
  replayEveryBatch = false;

  constructor(private readonly options: JournalOptions) {
    // better-sqlite3 13 is a Node-API 10 addon: on an older Node (before 22.14) it crashes inside
    // `new Database` with a bare segmentation fault, so say what is wrong, before touching any file.
    if (Number(process.versions.napi) < 10)
      throw new Error(`Klaxon needs Node.js 22.14 or newer (Node 22 or 24); this is ${process.version}`);
    this.walGuard = WalGuard.beforeOpen(options.path, {logger: options.logger, acceptWalLoss: options.acceptWalLoss});
    this.db = new Database(options.path);
    this.db.pragma("journal_mode = WAL");
    // NORMAL: COMMIT writes the WAL frames without flushing them, and WalSync flushes them on the
    // thread pool before any writer hears of its commit, so the main thread serves on meanwhile.
    // Checkpoints and WAL restarts still flush, as under FULL.
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("foreign_keys = ON");
    this.db.pragma("busy_timeout = 5000");
    // Checkpoints are the checkpointer thread's job; an automatic one would run inside a commit.
    this.db.pragma("wal_autocheckpoint = 0");
    this.migrate();
    this.walGuard.hold();
    this.savepoint = prepareAll(this.db, {begin: "SAVEPOINT w", release: "RELEASE w", rollback: "ROLLBACK TO w"});
    this.changeCounter = this.db.prepare("SELECT total_changes()").pluck();
    this.maxBatch = options.maxBatch ?? 512;
    this.checkpointer = options.replicated
      ? null
      : new Checkpointer(options.path, options.checkpointIntervalMs ?? 1000, options.logger);
    this.walSync = new WalSync(`${options.path}-wal`, options.fsync);
  }

  get schemaVersion(): number {
    return this.db.pragma("user_version", {simple: true}) as number;
  }

  private migrate(): void {
    const current = this.schemaVersion;
    if (current > MIGRATIONS.length) {
      throw new NewerJournalError(
        `journal ${this.options.path} has schema version ${current}, newer than this Klaxon knows (${MIGRATIONS.length}); run the newer version or restore a backup`
      );
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      this.db
        .transaction(() => {
          this.db.exec(MIGRATIONS[version]);
          this.db.pragma(`user_version = ${version + 1}`);
        })
        .immediate();
      this.options.logger.info("journal migrated", {schema_version: version + 1});
    }
  }

  /**
   * Queue a write; resolves with its result once it is durably committed. `work` may run twice:
   * when another write of its batch fails after changing rows, the batch is rolled back and run
   * again (`runBatch`). So `work` touches only the database and hands its result back as its
   * return value; an effect on memory goes through `afterCommit`, and action on the world
   * (sends, calls) waits for the promise.
   */
  write<T>(work: (db: Db) => T): Promise<T> {
    if (this.closed) return Promise.reject(new StorageUnavailableError(new Error("journal is closed")));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({work, resolve: resolve as (value: unknown) => void, reject});
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Call inside a write function: `effect` runs once that run of the write has committed, after
   * the commit and before any writer of the batch resumes, in the order registered. A run that is
   * rolled back (its batch replayed, or the write failed) drops what it registered.
   */
  afterCommit(effect: AfterCommitEffect): void {
    if (!this.running) throw new Error("afterCommit is for write functions, while they run");
    this.running.push(effect);
  }

  /** Run a read on the request path; reads never wait for a commit. */
  read<T>(work: (db: Db) => T): T {
    try {
      return work(this.db);
    } catch (error) {
      this.noteDamage(error, "a read");
      throw error;
    }
  }

  /**
   * A damaged file does not mend: the first report is kept (a latch), so /readyz gives one reason
   * that stays, not a flip-flop as commits that miss the damaged pages succeed between those that hit them.
   */
  private noteDamage(error: unknown, during: string): void {
    if (isDamage(error)) this.markDamaged(`${(error as Error).message}, on ${during}`);
  }

  /** Latches the journal damaged (the first finding stays): SQLite's words on a commit or read, or a page check's. */
  markDamaged(finding: string): void {
    if (this.damageSeen !== null) return;
    this.damageSeen = `journal ${this.options.path} is damaged (${finding}); restore a backup (docs/operations.md, "A damaged journal")`;
    this.options.logger.error("journal damaged: the gateway is unready until it is restored", {
      journal: this.options.path,
      finding
    });
  }

  /** Why the journal is damaged, from the first time SQLite said so; null while it never has. */
  get damage(): string | null {
    return this.damageSeen;
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      this.begin();
      const unisolated = this.runBatch(batch, false);
      outcomes = unisolated ?? [];
      if (unisolated === null || this.replayEveryBatch) {
        // A write failed after changing rows, and only a savepoint can take back one write's
        // changes: the batch runs again, each write in its own savepoint.
        this.db.exec("ROLLBACK");
        this.begin();
        outcomes = this.runBatch(batch, true);
        this.stats.replays++;
      }
      this.db.exec("COMMIT");
      this.stats.commits++;
      this.stats.writes += batch.length;
      this.checkpointer?.committed(batch.length);
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      const failure = this.asFailure(error);
      this.options.logger.error("journal commit failed", {error: failure as Error, batch: batch.length});
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const outcome of outcomes) if (outcome.ok) this.runEffects(outcome.effects);
    this.walSync.afterCommit((syncError) => this.settle(batch, outcomes, syncError));
  }

  /**
   * Tells a committed batch's writers. A failed flush leaves the commit visible but perhaps not
   * on the medium: its writers hear the storage failure (503), as a failed COMMIT would say.
   */
  private settle(batch: PendingWrite[], outcomes: Outcome[], syncError: Error | null): void {
    if (syncError) {
      this.storageFailing = true;
      this.options.logger.error("journal flush to disk failed", {error: syncError, batch: batch.length});
    }
    batch.forEach((item, index) => {
      const outcome = outcomes[index];
      if (syncError && outcome.ok) item.reject(new StorageUnavailableError(syncError));
      else if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  // The commit stands whatever an effect does: a failing one is logged and the others still run.
  private runEffects(effects: AfterCommitEffect[]): void {
    for (const effect of effects) {
      try {
        effect();
      } catch (error) {
        this.options.logger.error("an after-commit effect failed", {error: error as Error});
      }
    }
  }

  private begin(): void {
    this.db.exec("BEGIN IMMEDIATE");
    this.epoch++;
  }

  /**
   * Changes whenever rows read earlier may have gone back to older values: a transaction begun,
   * a write rolled back. A read cached in memory is current while this stays the same and no
   * repository reports an update since.
   */
  get cacheEpoch(): number {
    return this.epoch;
  }

  /**
   * Runs a batch's writes in the open transaction. A write that throws before changing a row
   * fails alone at no cost. With `isolated`, each write runs in a savepoint, so one that throws
   * after changing rows is rolled back alone; without, such a write makes this return null (the
   * caller replays the batch isolated). Savepoints are not the default because each one copies
   * every page the write touches to SQLite's statement journal: about a third of the CPU of an
   * alert's commit.
   */
  private runBatch(batch: PendingWrite[], isolated: true): Outcome[];
  private runBatch(batch: PendingWrite[], isolated: false): Outcome[] | null;
  private runBatch(batch: PendingWrite[], isolated: boolean): Outcome[] | null {
    const outcomes: Outcome[] = [];
    for (const item of batch) {
      const changesBefore = isolated ? 0 : this.totalChanges();
      if (isolated) this.savepoint.begin.run();
      const effects: AfterCommitEffect[] = [];
      this.running = effects;
      try {
        outcomes.push({ok: true, value: item.work(this.db), effects});
        if (isolated) this.savepoint.release.run();
      } catch (error) {
        // On a full disk or an I/O error SQLite may already have rolled the whole batch back:
        // then every write in it is lost and every caller must hear so.
        if (!this.db.inTransaction) throw error;
        if (isolated) {
          this.savepoint.rollback.run();
          this.savepoint.release.run();
          this.epoch++;
        } else if (this.totalChanges() !== changesBefore) {
          return null;
        }
        outcomes.push({ok: false, error: this.asFailure(error)});
      } finally {
        this.running = null;
      }
    }
    return outcomes;
  }

  /** Rows changed on this connection so far (sqlite3_total_changes): did a failed write change any? */
  private totalChanges(): number {
    return this.changeCounter.get() as number;
  }

  private asFailure(error: unknown): unknown {
    this.noteDamage(error, "a commit");
    if (!isStorageError(error)) return error;
    this.storageFailing = true;
    return new StorageUnavailableError(error as Error);
  }

  /**
   * Proves the journal can commit right now, through the normal commit path. After a commit
   * failed for lack of storage, a one-row update in place could still succeed, so the probe
   * then also needs fresh space (64 KiB written and dropped in the same transaction) and only
   * its success clears the failure.
   */
  async probe(atIso: string): Promise<void> {
    const needsSpace = this.storageFailing;
    await this.write((db) => {
      db.prepare("INSERT INTO probe (id, at) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET at = excluded.at").run(atIso);
      if (needsSpace) {
        db.prepare("INSERT INTO probe (id, at, space) VALUES (2, ?, zeroblob(65536))").run(atIso);
        db.prepare("DELETE FROM probe WHERE id = 2").run();
      }
    });
    if (needsSpace) this.storageFailing = false;
  }

  /** The checkpointer's last result: how much of the WAL has been folded into the database. */
  get lastCheckpoint() {
    return this.checkpointer?.lastCheckpoint ?? null;
  }

  /** True after a commit failed for lack of storage, until a commit with room to grow succeeds. */
  get isStorageFailing(): boolean {
    return this.storageFailing;
  }

  /** The one listener told around the clean close (the config store's record of this journal). */
  listenToClose(listener: JournalCloseListener): void {
    this.closeListener = listener;
  }

  /** Commit what is queued, stop the checkpointer, fold the WAL in, close, and drop the open marker. */
  async close(): Promise<void> {
    if (this.closed) return;
    const listener = this.closeListener;
    this.closeListener = null;
    await listener?.beforeClose();
    while (this.queue.length > 0 || this.flushScheduled || this.walSync.pending)
      await new Promise((resolve) => setImmediate(resolve));
    this.closed = true;
    this.walSync.close();
    if (this.checkpointer) {
      await this.checkpointer.stop();
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    }
    // An emptied WAL loses nothing if a crash follows, so the marker may go before the close; if
    // the checkpoint was blocked, closing the last connection folds the WAL in and deletes it.
    // The listener hears of the clean close at the same moment, for the same reason.
    const emptied = this.walGuard.releaseIfWalEmpty();
    if (emptied) await listener?.closedCleanly();
    this.db.close();
    if (!emptied && this.walGuard.releaseIfWalEmpty()) await listener?.closedCleanly();
  }
}
