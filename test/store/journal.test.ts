import {afterEach, describe, expect, it, vi} from "vitest";
import {existsSync, fsyncSync, statSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {Journal, StorageUnavailableError} from "../../src/store/journal/journal.js";
import {CHECKPOINT_AFTER_WRITES} from "../../src/store/journal/checkpointer.js";
import {MIGRATIONS, NewerJournalError} from "../../src/store/journal/migrations.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";

const logger = createLogger("error", () => undefined);
const open: Journal[] = [];

function journalAt(path: string, checkpointIntervalMs = 60_000): Journal {
  const journal = new Journal({path, logger, checkpointIntervalMs});
  open.push(journal);
  return journal;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((journal) => journal.close()));
});

const insertProbe = (journal: Journal, id: number) =>
  journal.write((db) => db.prepare("INSERT INTO probe (id, at) VALUES (?, 'x')").run(id));

describe("journal", () => {
  it("opens in WAL mode with synchronous=NORMAL (it flushes the WAL itself) and the latest schema", () => {
    const journal = journalAt(join(tempDir(), "j.sqlite"));
    expect(journal.db.pragma("journal_mode", {simple: true})).toBe("wal");
    expect(journal.db.pragma("synchronous", {simple: true})).toBe(1);
    expect(journal.schemaVersion).toBe(MIGRATIONS.length);
  });

  it("refuses a journal written by a newer Klaxon", () => {
    const path = join(tempDir(), "newer.sqlite");
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => new Journal({path, logger})).toThrow(NewerJournalError);
    expect(() => new Journal({path, logger})).toThrow(/newer than this Klaxon knows/);
  });

  it("commits many concurrent writes together (group commit)", async () => {
    const journal = journalAt(join(tempDir(), "group.sqlite"));
    const before = {...journal.stats};
    await Promise.all(Array.from({length: 200}, (_, i) => insertProbe(journal, 100 + i)));
    expect(journal.stats.writes - before.writes).toBe(200);
    expect(journal.stats.commits - before.commits).toBeLessThanOrEqual(2);
    expect((journal.db.prepare("SELECT COUNT(*) AS n FROM probe").get() as {n: number}).n).toBe(200);
  });

  it("rolls back only the write that failed; its neighbours in the batch commit", async () => {
    const journal = journalAt(join(tempDir(), "isolated.sqlite"));
    const results = await Promise.allSettled([
      insertProbe(journal, 1),
      journal.write((db) => {
        db.prepare("INSERT INTO probe (id, at) VALUES (2, 'x')").run();
        throw new Error("business rule says no");
      }),
      insertProbe(journal, 3)
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("business rule says no");
    expect(journal.db.prepare("SELECT id FROM probe ORDER BY id").all()).toEqual([{id: 1}, {id: 3}]);
    // The failed write had changed a row: the batch was replayed with a savepoint per write.
    expect(journal.stats.replays).toBe(1);
  });

  it("fails a write that throws before changing anything alone, without running its neighbours again", async () => {
    const journal = journalAt(join(tempDir(), "cheap-failure.sqlite"));
    const runs = {first: 0, last: 0};
    const results = await Promise.allSettled([
      journal.write((db) => {
        runs.first++;
        db.prepare("INSERT INTO probe (id, at) VALUES (1, 'x')").run();
      }),
      journal.write((db) => {
        db.prepare("UPDATE probe SET at = 'y' WHERE id = 999").run(); // changes no row
        throw new Error("unknown recipient");
      }),
      journal.write((db) => {
        runs.last++;
        db.prepare("INSERT INTO probe (id, at) VALUES (3, 'x')").run();
      })
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(runs).toEqual({first: 1, last: 1});
    expect(journal.stats.replays).toBe(0);
    expect(journal.db.prepare("SELECT id FROM probe ORDER BY id").all()).toEqual([{id: 1}, {id: 3}]);
  });

  it("replays a batch whose failed write had changed rows once, and keeps every neighbour's result", async () => {
    const journal = journalAt(join(tempDir(), "replay.sqlite"));
    const runs: number[] = [];
    const neighbour = (id: number) =>
      journal.write((db) => {
        runs.push(id);
        db.prepare("INSERT INTO probe (id, at) VALUES (?, 'x')").run(id);
        return id * 10;
      });
    const results = await Promise.allSettled([
      neighbour(1),
      journal.write((db) => {
        db.prepare("INSERT INTO probe (id, at) VALUES (2, 'x')").run();
        db.prepare("INSERT INTO probe (id, at) VALUES (1, 'duplicate')").run(); // a constraint fails after a change
      }),
      neighbour(3)
    ]);
    expect(results[0]).toEqual({status: "fulfilled", value: 10});
    expect((results[1] as PromiseRejectedResult).reason.code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect(results[2]).toEqual({status: "fulfilled", value: 30});
    // The replay starts at the failure: the write before it ran twice (its first run rolled back), the one after once.
    expect(runs).toEqual([1, 1, 3]);
    expect(journal.stats.replays).toBe(1);
    expect(journal.db.prepare("SELECT id, at FROM probe ORDER BY id").all()).toEqual([
      {id: 1, at: "x"},
      {id: 3, at: "x"}
    ]);
  });

  it("fails every write of a batch that the disk cannot hold, as a storage error", async () => {
    const journal = journalAt(join(tempDir(), "full.sqlite"));
    journal.db.pragma(`max_page_count = ${Number(journal.db.pragma("page_count", {simple: true}))}`);
    const big = (id: number) =>
      journal.write((db) => db.prepare("INSERT INTO probe (id, at, space) VALUES (?, 'x', zeroblob(200000))").run(id));
    const results = await Promise.allSettled([insertProbe(journal, 1), big(2)]);
    for (const result of results)
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
    expect(journal.isStorageFailing).toBe(true);
    await expect(journal.probe("now")).rejects.toBeInstanceOf(StorageUnavailableError);
    journal.db.pragma("max_page_count = 1073741823");
    await journal.probe("later");
    expect(journal.isStorageFailing).toBe(false);
  });

  it("checkpoints the WAL on its own thread and truncates it on close", async () => {
    const path = join(tempDir(), "wal.sqlite");
    const journal = new Journal({path, logger, checkpointIntervalMs: 20});
    await Promise.all(Array.from({length: CHECKPOINT_AFTER_WRITES}, (_, i) => insertProbe(journal, i + 1)));
    await vi.waitFor(() => expect(journal.lastCheckpoint?.checkpointed).toBeGreaterThan(0));
    await journal.close();
    expect(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0).toBe(true);
    const reopened = new Database(path, {readonly: true});
    expect(reopened.pragma("integrity_check", {simple: true})).toBe("ok");
    expect((reopened.prepare("SELECT COUNT(*) AS n FROM probe").get() as {n: number}).n).toBe(CHECKPOINT_AFTER_WRITES);
    reopened.close();
  });

  it("lets the checkpointer's thread go while idle and starts it again when writes come in bulk", async () => {
    const path = join(tempDir(), "idle.sqlite");
    const journal = new Journal({path, logger, checkpointIntervalMs: 20});
    await insertProbe(journal, 1);
    await vi.waitFor(() => expect(journal.checkpointer?.running).toBe(false), {timeout: 10_000});
    await insertProbe(journal, 2);
    expect(journal.checkpointer?.running).toBe(false);
    await Promise.all(Array.from({length: CHECKPOINT_AFTER_WRITES}, (_, i) => insertProbe(journal, i + 3)));
    expect(journal.checkpointer?.running).toBe(true);
    await journal.close();
    const reopened = new Database(path, {readonly: true});
    expect((reopened.prepare("SELECT COUNT(*) AS n FROM probe").get() as {n: number}).n).toBe(
      CHECKPOINT_AFTER_WRITES + 2
    );
    reopened.close();
  });

  it("refuses writes after close with a storage error", async () => {
    const journal = new Journal({path: join(tempDir(), "closed.sqlite"), logger});
    await journal.close();
    await expect(insertProbe(journal, 1)).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

/** An fsync held back until the test lets it go: which writes wait for which flush. */
function heldFsync() {
  const held: Array<{fd: number; done: (error: NodeJS.ErrnoException | null) => void}> = [];
  return {
    held,
    fsync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => held.push({fd, done}),
    release(index: number, error: NodeJS.ErrnoException | null = null) {
      // The real flush too, so the file really is on the medium when the writers hear so.
      if (!error) fsyncSync(held[index].fd);
      held[index].done(error);
    }
  };
}

describe("journal flushes off the main thread", () => {
  it("answers a write only once a flush begun after its commit has finished", async () => {
    const disk = heldFsync();
    const journal = new Journal({path: join(tempDir(), "held.sqlite"), logger, fsync: disk.fsync});
    open.push(journal);
    const settled: number[] = [];
    const first = insertProbe(journal, 1).then(() => settled.push(1));
    await vi.waitUntil(() => disk.held.length === 1);
    // Committed (visible to reads) but not yet answered.
    expect((journal.db.prepare("SELECT COUNT(*) AS n FROM probe").get() as {n: number}).n).toBe(1);
    const second = insertProbe(journal, 2).then(() => settled.push(2));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toEqual([]);
    // The second commit came while the first flush ran: it waits for a flush of its own.
    expect(disk.held).toHaveLength(1);
    disk.release(0);
    await first;
    expect(settled).toEqual([1]);
    await vi.waitUntil(() => disk.held.length === 2);
    expect(settled).toEqual([1]);
    disk.release(1);
    await second;
    expect(settled).toEqual([1, 2]);
    expect(journal.syncs).toBe(2);
  });

  it("fails the writes of a commit whose flush failed as a storage error, and says so", async () => {
    const disk = heldFsync();
    const journal = new Journal({path: join(tempDir(), "eio.sqlite"), logger, fsync: disk.fsync});
    open.push(journal);
    const write = insertProbe(journal, 1);
    await vi.waitUntil(() => disk.held.length === 1);
    disk.release(0, Object.assign(new Error("EIO: i/o error, fsync"), {code: "EIO"}));
    await expect(write).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(journal.isStorageFailing).toBe(true);
  });

  it("lets close wait for the flush in flight", async () => {
    const disk = heldFsync();
    const journal = new Journal({path: join(tempDir(), "closing.sqlite"), logger, fsync: disk.fsync});
    const write = insertProbe(journal, 1);
    await vi.waitUntil(() => disk.held.length === 1);
    const closing = journal.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(journal.db.open).toBe(true);
    disk.release(0);
    await Promise.all([write, closing]);
    expect(journal.db.open).toBe(false);
  });
});
