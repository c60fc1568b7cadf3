import {setFlagsFromString} from "node:v8";
import {runInNewContext} from "node:vm";
import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {createLogger} from "../../src/lib/logger.js";
import {IdleTrim} from "../../src/ops/idle-trim.js";

// Idle footprint (issue 36 item 2, docs/benchmarks.md): once the started gateway is quiet, one
// memory-reducing collection gives back what start-up left resident; never in the middle of load.

const QUIET = 0.001;
const BUSY = 0.9;

function trimOver(readings: number[], quietReadings = 2) {
  let next = 0;
  const collectedAt: number[] = [];
  const trim = new IdleTrim({
    collect: () => collectedAt.push(next - 1),
    utilization: () => readings[next++],
    rss: () => 0,
    logger: createLogger("error", () => undefined),
    quietReadings
  });
  for (let reading = 0; reading < readings.length; reading++) trim.tick();
  return {collectedAt, trim};
}

describe("the idle trim", () => {
  it("waits for quiet readings in a row, then collects once", () => {
    expect(trimOver([BUSY, QUIET, BUSY, QUIET]).collectedAt).toEqual([]);
    const {collectedAt, trim} = trimOver([BUSY, QUIET, QUIET, QUIET, QUIET]);
    expect(collectedAt).toEqual([2]);
    expect(trim.done).toBe(true);
  });

  it("never collects in a busy reading or twice, whatever the load (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(QUIET), fc.constant(BUSY), fc.double({min: 0, max: 1, noNaN: true})), {
          maxLength: 40
        }),
        fc.integer({min: 1, max: 4}),
        (readings, quietReadings) => {
          const {collectedAt} = trimOver(readings, quietReadings);
          expect(collectedAt.length).toBeLessThanOrEqual(1);
          const firstQuietRun = readings.findIndex((_, at) =>
            at + 1 >= quietReadings ? readings.slice(at + 1 - quietReadings, at + 1).every((u) => u <= 0.05) : false
          );
          expect(collectedAt).toEqual(firstQuietRun === -1 ? [] : [firstQuietRun]);
        }
      )
    );
  });

  it("gives the memory of dropped objects back on a quiet event loop, with the real collector", async () => {
    // node --expose-gc's gc, as the systemd unit's flag gives the gateway.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as NonNullable<typeof globalThis.gc>;
    setFlagsFromString("--no-expose-gc");
    // Garbage like start-up's, kept reachable until the trim collects so no other collection frees it first.
    let garbage: unknown[] | null = Array.from({length: 200_000}, (_, i) => ({i, text: `start-up ${i}`, list: [i]}));
    const lines: string[] = [];
    const trim = new IdleTrim({
      collect: () => {
        garbage = null;
        gc({type: "major", execution: "sync", flavor: "last-resort"});
      },
      logger: createLogger("info", (line) => lines.push(line)),
      intervalMs: 50
    });
    trim.start();
    await expect.poll(() => trim.done, {timeout: 30_000, interval: 50}).toBe(true);
    expect(garbage).toBeNull();
    const record = JSON.parse(lines[0]) as {msg: string; rss_mb_before: number; rss_mb_after: number};
    expect(record.msg).toBe("idle: memory given back after start-up");
    expect(record.rss_mb_before - record.rss_mb_after).toBeGreaterThan(20);
  });
});
