import {describe, expect, it} from "vitest";
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
});
