import {describe, expect, it} from "vitest";
import {BackupSchedule} from "../../src/ops/backup-schedule.js";
import type {BackupService} from "../../src/ops/backups.js";
import {cronProblem} from "../../src/domain/cron.js";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";

function rig(expression: string, startIso: string, zone = "Europe/Berlin") {
  const clock = new ManualClock(Date.parse(startIso));
  const runs: string[] = [];
  let finish: (() => void) | null = null;
  const backups = {
    create: () => {
      runs.push(new Date(clock.now()).toISOString());
      return new Promise<void>((resolve) => (finish = resolve));
    }
  } as unknown as BackupService;
  const lines: string[] = [];
  const schedule = new BackupSchedule({
    expression,
    zone,
    backups,
    clock,
    logger: createLogger("debug", (line) => lines.push(line))
  });
  return {clock, runs, lines, schedule, finish: () => finish?.()};
}

describe("the backup schedule", () => {
  it.each(["0 0 L * *", "0 30 2 * * *", "0 0 31 2 *", "60 2 * * *"])(
    "refuses %j with the words a heartbeat schedule gets",
    (expression) => {
      const problem = cronProblem(expression, "Europe/Berlin", Date.UTC(2026, 0, 10));
      expect(problem).not.toBeNull();
      expect(() => rig(expression, "2026-01-10T12:00:00Z")).toThrow(`backup.schedule: "${expression}": ${problem}`);
    }
  );

  it("is off with an empty expression", () => {
    const {schedule} = rig("", "2026-01-10T12:00:00Z");
    schedule.start();
    expect(schedule.nextAt).toBeNull();
  });

  it("runs at the slot in the box's zone and aims at the next night", async () => {
    const {clock, runs, schedule, finish} = rig("30 2 * * *", "2026-01-10T12:00:00Z");
    schedule.start();
    expect(schedule.nextAt).toBe(Date.parse("2026-01-11T01:30:00Z"));
    clock.set(Date.parse("2026-01-11T01:29:59Z"));
    await schedule.tick();
    expect(runs).toEqual([]);
    clock.set(Date.parse("2026-01-11T01:30:00Z"));
    const pass = schedule.tick();
    finish();
    await pass;
    expect(runs).toEqual(["2026-01-11T01:30:00.000Z"]);
    expect(schedule.nextAt).toBe(Date.parse("2026-01-12T01:30:00Z"));
    schedule.stop();
  });

  it("runs a slot that clocks spring over at the jump, as Debian's cron does", () => {
    const {schedule} = rig("30 2 * * *", "2026-03-28T12:00:00Z");
    schedule.start();
    expect(schedule.nextAt).toBe(Date.parse("2026-03-29T01:00:00Z"));
    schedule.stop();
  });

  it("lets a slot pass while the previous backup still runs", async () => {
    const {clock, runs, lines, schedule, finish} = rig("*/10 * * * *", "2026-01-10T12:00:00Z", "UTC");
    schedule.start();
    clock.set(Date.parse("2026-01-10T12:10:00Z"));
    const first = schedule.tick();
    clock.set(Date.parse("2026-01-10T12:20:00Z"));
    await schedule.tick();
    expect(runs).toEqual(["2026-01-10T12:10:00.000Z"]);
    expect(lines.some((line) => line.includes("scheduled backup skipped"))).toBe(true);
    expect(schedule.nextAt).toBe(Date.parse("2026-01-10T12:30:00Z"));
    finish();
    await first;
    schedule.stop();
  });
});
