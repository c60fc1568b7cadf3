import {afterEach, describe, expect, it, vi} from "vitest";
import {createLogger, logFormatFor, stdoutIsJournal} from "../../src/lib/logger.js";

function capture(syslogPrefix: boolean) {
  const lines: string[] = [];
  return {lines, logger: createLogger("debug", (line) => lines.push(line), {}, {syslogPrefix})};
}

describe("the logger", () => {
  it("writes plain JSON lines by default", () => {
    const {lines, logger} = capture(false);
    logger.warn("disk nearly full", {free_bytes: 10});
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({level: "warn", msg: "disk nearly full", free_bytes: 10});
  });

  it("starts each line with its syslog priority for journald, children included", () => {
    const {lines, logger} = capture(true);
    logger.error("e");
    logger.warn("w");
    logger.info("i");
    logger.child({component: "modem"}).debug("d");
    expect(lines.map((line) => line.slice(0, 3))).toEqual(["<3>", "<4>", "<6>", "<7>"]);
    expect(JSON.parse(lines[3].slice(3))).toMatchObject({level: "debug", msg: "d", component: "modem"});
  });

  it("prefixes on auto only when stdout is the journal stream systemd named", () => {
    expect(logFormatFor("on", null).syslogPrefix).toBe(true);
    expect(logFormatFor("off", "8:1234").syslogPrefix).toBe(false);
    expect(logFormatFor("auto", null).syslogPrefix).toBe(false);
    // An inherited JOURNAL_STREAM naming some other file is not ours.
    expect(stdoutIsJournal("0:1")).toBe(false);
  });

  describe("folding repeats", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("writes identical lines once per 10 s with a count, so a failure on every request cannot flood the journal", () => {
      vi.useFakeTimers();
      const {lines, logger} = capture(false);
      const failed = () =>
        logger
          .child({component: "api"})
          .error("request failed", {path: "/api/v1/recipients", code: "storage_unavailable"});
      for (let i = 0; i < 5000; i++) failed();
      logger.error("request failed", {path: "/api/v1/groups"});
      expect(lines).toHaveLength(2);
      vi.advanceTimersByTime(10_000);
      expect(lines).toHaveLength(3);
      expect(JSON.parse(lines[2])).toMatchObject({
        level: "error",
        msg: "request failed",
        component: "api",
        path: "/api/v1/recipients",
        repeated: 4999,
        repeated_within_seconds: 10
      });
      // Still failing: one line per window with that window's count.
      for (let i = 0; i < 30; i++) failed();
      vi.advanceTimersByTime(10_000);
      expect(lines).toHaveLength(4);
      expect(JSON.parse(lines[3])).toMatchObject({repeated: 30});
      // A quiet window ends the fold: the next occurrence is written at once again.
      vi.advanceTimersByTime(10_000);
      failed();
      expect(lines).toHaveLength(5);
      expect(JSON.parse(lines[4])).not.toHaveProperty("repeated");
    });

    it("folds failed requests that differ only in duration and request id, but not ordinary requests", () => {
      vi.useFakeTimers();
      const {lines, logger} = capture(false);
      for (let i = 0; i < 100; i++)
        logger.warn("http", {method: "POST", path: "/api/v1/recipients", status: 503, ms: i / 10, request_id: `r${i}`});
      for (let i = 0; i < 3; i++)
        logger.debug("http", {method: "POST", path: "/api/v1/recipients", status: 201, ms: 1, request_id: `ok${i}`});
      expect(lines).toHaveLength(4);
      vi.advanceTimersByTime(10_000);
      expect(JSON.parse(lines[4])).toMatchObject({status: 503, request_id: "r0", repeated: 99});
    });

    it("keeps lines that differ in level or fields apart, and folds nothing with foldRepeatsMs 0", () => {
      vi.useFakeTimers();
      const {lines, logger} = capture(false);
      logger.warn("retrying", {attempt: 1});
      logger.warn("retrying", {attempt: 2});
      logger.error("retrying", {attempt: 2});
      expect(lines).toHaveLength(3);
      const unfolded: string[] = [];
      const plain = createLogger("debug", (line) => unfolded.push(line), {}, {syslogPrefix: false, foldRepeatsMs: 0});
      for (let i = 0; i < 3; i++) plain.info("same");
      expect(unfolded).toHaveLength(3);
    });
  });
});
