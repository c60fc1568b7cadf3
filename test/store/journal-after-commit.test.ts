import {afterEach, describe, expect, it} from "vitest";
import {join} from "node:path";
import {Journal} from "../../src/store/journal/journal.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";

const logLines: string[] = [];
const open: Journal[] = [];

function journal(): Journal {
  const opened = new Journal({
    path: join(tempDir(), "after-commit.sqlite"),
    logger: createLogger("error", (line) => logLines.push(line)),
    checkpointIntervalMs: 60_000
  });
  open.push(opened);
  return opened;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((each) => each.close()));
  logLines.length = 0;
});

/** A write that inserts a probe row and registers an effect naming it; `runs` counts its runs. */
function probeWrite(target: Journal, id: number, effects: string[], runs: number[] = []): Promise<number> {
  return target.write((db) => {
    runs.push(id);
    db.prepare("INSERT INTO probe (id, at) VALUES (?, 'x')").run(id);
    target.afterCommit(() => effects.push(`committed ${id}`));
    return id;
  });
}

describe("the journal's after-commit effects", () => {
  it("runs a write's effects once it has committed, in order, before its caller resumes", async () => {
    const target = journal();
    const effects: string[] = [];
    const written = target.write((db) => {
      target.afterCommit(() =>
        effects.push(
          `first, sees ${db.prepare("SELECT COUNT(*) FROM probe").pluck().get() as number} row, in a transaction: ${db.inTransaction}`
        )
      );
      db.prepare("INSERT INTO probe (id, at) VALUES (1, 'x')").run();
      target.afterCommit(() => effects.push("second"));
      expect(effects).toEqual([]);
    });
    await written;
    expect(effects).toEqual(["first, sees 1 row, in a transaction: false", "second"]);
  });

  it("keeps only the effects of the committed run when a sibling's failure replays the batch", async () => {
    const target = journal();
    const effects: string[] = [];
    const runs: number[] = [];
    const results = await Promise.allSettled([
      probeWrite(target, 1, effects, runs),
      target.write((db) => {
        target.afterCommit(() => effects.push("the failed write's"));
        db.prepare("INSERT INTO probe (id, at) VALUES (2, 'x')").run();
        throw new Error("fails after changing a row");
      }),
      probeWrite(target, 3, effects, runs)
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(target.stats.replays).toBe(1);
    expect(runs).toEqual([1, 1, 3]);
    expect(effects).toEqual(["committed 1", "committed 3"]);
  });

  it("drops every effect of a batch whose commit fails", async () => {
    const target = journal();
    target.db.pragma(`max_page_count = ${Number(target.db.pragma("page_count", {simple: true}))}`);
    const effects: string[] = [];
    const big = target.write((db) => {
      target.afterCommit(() => effects.push("big"));
      db.prepare("INSERT INTO probe (id, at, space) VALUES (9, 'x', zeroblob(200000))").run();
    });
    const results = await Promise.allSettled([probeWrite(target, 1, effects), big]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(effects).toEqual([]);
  });

  it("with replayEveryBatch runs every write twice and its effects once", async () => {
    const target = journal();
    target.replayEveryBatch = true;
    const effects: string[] = [];
    const runs: number[] = [];
    expect(await Promise.all([probeWrite(target, 1, effects, runs), probeWrite(target, 2, effects, runs)])).toEqual([
      1, 2
    ]);
    expect(runs).toEqual([1, 2, 1, 2]);
    expect(effects).toEqual(["committed 1", "committed 2"]);
    expect(target.db.prepare("SELECT id FROM probe ORDER BY id").pluck().all()).toEqual([1, 2]);
  });

  it("commits and resolves even when an effect throws, and logs the failure", async () => {
    const target = journal();
    const effects: string[] = [];
    const written = target.write((db) => {
      db.prepare("INSERT INTO probe (id, at) VALUES (1, 'x')").run();
      target.afterCommit(() => {
        throw new Error("a listener broke");
      });
      target.afterCommit(() => effects.push("next"));
      return "done";
    });
    expect(await written).toBe("done");
    expect(effects).toEqual(["next"]);
    expect(logLines.join("\n")).toContain("a listener broke");
  });

  it("refuses an effect registered outside a write function", async () => {
    const target = journal();
    expect(() => target.afterCommit(() => undefined)).toThrow(/write functions/);
    await probeWrite(target, 1, []);
    expect(() => target.afterCommit(() => undefined)).toThrow(/write functions/);
  });

  it("changes the cache epoch when a write is rolled back to its savepoint", async () => {
    const target = journal();
    const epochs: number[] = [];
    await Promise.allSettled([
      target.write((db) => {
        epochs.push(target.cacheEpoch);
        db.prepare("INSERT INTO probe (id, at) VALUES (1, 'x')").run();
        throw new Error("fails after changing a row");
      }),
      target.write(() => epochs.push(target.cacheEpoch))
    ]);
    // The failed write's first run, its run in the replay's new transaction, then its neighbour after its rollback.
    expect(epochs.map((epoch) => epoch - epochs[0])).toEqual([0, 1, 2]);
  });
});
