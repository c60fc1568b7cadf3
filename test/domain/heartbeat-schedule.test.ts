import {describe, expect, it} from "vitest";
import {nextExpectedAt, type HeartbeatSchedule} from "../../src/domain/heartbeat-schedule.js";

const cron = (schedule: string, timezone = "UTC"): HeartbeatSchedule => ({kind: "cron", schedule, timezone});

function nextAfter(schedule: HeartbeatSchedule, iso: string): string | null {
  const next = nextExpectedAt(schedule, Date.parse(iso));
  return next === null ? null : new Date(next).toISOString();
}

// Each row: what it shows, the schedule, the last ping (with its local reading), the next expected ping.
type Row = [string, HeartbeatSchedule, string, string | null];

describe("nextExpectedAt", () => {
  describe("with a fixed period", () => {
    const rows: Row[] = [
      [
        "adds the period to the ping",
        {kind: "period", period_seconds: 10},
        "2026-01-15T10:00:00.000Z",
        "2026-01-15T10:00:10.000Z"
      ],
      [
        "keeps the ping's milliseconds",
        {kind: "period", period_seconds: 3600},
        "2026-01-15T10:00:00.250Z",
        "2026-01-15T11:00:00.250Z"
      ],
      [
        "ignores daylight saving (a day is 86400 s)",
        {kind: "period", period_seconds: 86_400},
        "2026-03-28T12:00:00.000Z",
        "2026-03-29T12:00:00.000Z"
      ]
    ];
    it.each(rows)("%s", (_name, schedule, iso, expected) => expect(nextAfter(schedule, iso)).toBe(expected));
  });

  describe("with a cron schedule on ordinary days", () => {
    const rows: Row[] = [
      [
        "finds later the same day (01:59:59 UTC, daily 03:00 Berlin = 02:00 UTC)",
        cron("0 3 * * *", "Europe/Berlin"),
        "2026-01-15T01:59:59.000Z",
        "2026-01-15T02:00:00.000Z"
      ],
      [
        "moves to the next day once the slot is used (03:00:05 CET)",
        cron("0 3 * * *", "Europe/Berlin"),
        "2026-01-15T02:00:05.000Z",
        "2026-01-16T02:00:00.000Z"
      ],
      [
        "is strictly after a ping exactly on the slot",
        cron("*/15 * * * *"),
        "2026-01-15T10:15:00.000Z",
        "2026-01-15T10:30:00.000Z"
      ],
      ["steps through the hour", cron("*/15 * * * *"), "2026-01-15T10:07:00.000Z", "2026-01-15T10:15:00.000Z"],
      [
        "reads a start with a step as 'from there on' (5/20)",
        cron("5/20 * * * *"),
        "2026-01-15T10:26:00.000Z",
        "2026-01-15T10:45:00.000Z"
      ],
      ["reads lists and ranges", cron("0 8,12-13 * * *"), "2026-01-15T12:30:00.000Z", "2026-01-15T13:00:00.000Z"],
      [
        "reads month and weekday names (first Monday in February)",
        cron("0 8 * feb mon"),
        "2026-01-15T00:00:00.000Z",
        "2026-02-02T08:00:00.000Z"
      ],
      ["takes 7 as Sunday", cron("0 0 * * 7"), "2026-01-28T00:00:00.000Z", "2026-02-01T00:00:00.000Z"],
      [
        "skips the weekend for a weekday job (Friday 09:00 EST -> Monday 09:00 EDT)",
        cron("0 9 * * 1-5", "America/New_York"),
        "2026-03-06T14:00:00.000Z",
        "2026-03-09T13:00:00.000Z"
      ],
      [
        "matches either day field when both are restricted (the 10th, a Tuesday)",
        cron("0 0 10 * 5"),
        "2026-02-07T00:00:00.000Z",
        "2026-02-10T00:00:00.000Z"
      ],
      [
        "matches either day field when both are restricted (a Friday)",
        cron("0 0 10 * 5"),
        "2026-02-01T00:00:00.000Z",
        "2026-02-06T00:00:00.000Z"
      ],
      ["waits for a leap day", cron("0 0 29 2 *"), "2026-03-01T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
      [
        "follows a zone with a 45-minute offset",
        cron("0 6 * * *", "Asia/Kathmandu"),
        "2026-01-15T00:00:00.000Z",
        "2026-01-15T00:15:00.000Z"
      ],
      ["never matches 31 February", cron("0 0 31 2 *"), "2026-01-01T00:00:00.000Z", null]
    ];
    it.each(rows)("%s", (_name, schedule, iso, expected) => expect(nextAfter(schedule, iso)).toBe(expected));
  });

  describe("when Europe/Berlin springs forward (2026-03-29 02:00 CET -> 03:00 CEST, at 01:00 UTC)", () => {
    const rows: Row[] = [
      [
        "runs a skipped daily time at the jump (02:30 does not exist)",
        cron("30 2 * * *", "Europe/Berlin"),
        "2026-03-28T01:30:00.000Z",
        "2026-03-29T01:00:00.000Z"
      ],
      [
        "runs it at 02:30 CEST the day after",
        cron("30 2 * * *", "Europe/Berlin"),
        "2026-03-29T01:00:00.000Z",
        "2026-03-30T00:30:00.000Z"
      ],
      [
        "moves a half-hourly job from 01:30 CET straight to 03:00 CEST",
        cron("*/30 * * * *", "Europe/Berlin"),
        "2026-03-29T00:30:00.000Z",
        "2026-03-29T01:00:00.000Z"
      ],
      [
        "continues at 03:30 CEST",
        cron("*/30 * * * *", "Europe/Berlin"),
        "2026-03-29T01:00:00.000Z",
        "2026-03-29T01:30:00.000Z"
      ],
      [
        "keeps a daily 03:00 job at 03:00 CEST (one real hour earlier)",
        cron("0 3 * * *", "Europe/Berlin"),
        "2026-03-28T02:00:00.000Z",
        "2026-03-29T01:00:00.000Z"
      ]
    ];
    it.each(rows)("%s", (_name, schedule, iso, expected) => expect(nextAfter(schedule, iso)).toBe(expected));
  });

  describe("when Europe/Berlin falls back (2026-10-25 03:00 CEST -> 02:00 CET, at 01:00 UTC)", () => {
    const rows: Row[] = [
      [
        "runs a daily 02:30 job at the first 02:30 (CEST)",
        cron("30 2 * * *", "Europe/Berlin"),
        "2026-10-24T00:30:00.000Z",
        "2026-10-25T00:30:00.000Z"
      ],
      [
        "does not run it again at the second 02:30 (CET)",
        cron("30 2 * * *", "Europe/Berlin"),
        "2026-10-25T00:30:00.000Z",
        "2026-10-26T01:30:00.000Z"
      ],
      [
        "runs a wildcard-hour job in real time: 02:30 CEST -> 02:00 CET",
        cron("*/30 * * * *", "Europe/Berlin"),
        "2026-10-25T00:30:00.000Z",
        "2026-10-25T01:00:00.000Z"
      ],
      ["then 02:30 CET", cron("*/30 * * * *", "Europe/Berlin"), "2026-10-25T01:00:00.000Z", "2026-10-25T01:30:00.000Z"],
      ["then 03:00 CET", cron("*/30 * * * *", "Europe/Berlin"), "2026-10-25T01:30:00.000Z", "2026-10-25T02:00:00.000Z"]
    ];
    it.each(rows)("%s", (_name, schedule, iso, expected) => expect(nextAfter(schedule, iso)).toBe(expected));
  });

  describe("when New York falls back (2026-11-01 02:00 EDT -> 01:00 EST, at 06:00 UTC)", () => {
    const rows: Row[] = [
      [
        "runs a daily 01:30 job at the first 01:30 (EDT)",
        cron("30 1 * * *", "America/New_York"),
        "2026-10-31T05:30:00.000Z",
        "2026-11-01T05:30:00.000Z"
      ],
      [
        "skips the second 01:30 (EST) and runs the next day",
        cron("30 1 * * *", "America/New_York"),
        "2026-11-01T05:30:00.000Z",
        "2026-11-02T06:30:00.000Z"
      ]
    ];
    it.each(rows)("%s", (_name, schedule, iso, expected) => expect(nextAfter(schedule, iso)).toBe(expected));
  });
});
