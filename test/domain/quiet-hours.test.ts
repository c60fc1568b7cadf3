import {describe, expect, it} from "vitest";
import {quietHoursEnd} from "../../src/domain/escalation/quiet-hours.js";
import type {QuietHours} from "../../src/domain/recipient.js";
import {quiet} from "../support/escalation-fixtures.js";

function endAt(hours: QuietHours, iso: string): string | null {
  const end = quietHoursEnd(hours, Date.parse(iso));
  return end === null ? null : new Date(end).toISOString();
}

// Each row: quiet hours, the instant asked about (with its local reading), the expected end or null.
type Row = [string, QuietHours, string, string | null];

describe("quietHoursEnd", () => {
  describe("on ordinary days", () => {
    const night = quiet("22:00", "07:00", "Europe/Berlin");
    const office = quiet("09:00", "17:00", "Europe/Berlin");
    const rows: Row[] = [
      ["is quiet from the start minute (22:00 CET)", night, "2026-01-15T21:00:00.000Z", "2026-01-16T06:00:00.000Z"],
      ["is not quiet the second before the start (21:59:59 CET)", night, "2026-01-15T20:59:59.000Z", null],
      ["stays quiet across midnight (00:30 CET)", night, "2026-01-15T23:30:00.000Z", "2026-01-16T06:00:00.000Z"],
      ["is still quiet in the last minute (06:59 CET)", night, "2026-01-16T05:59:00.000Z", "2026-01-16T06:00:00.000Z"],
      ["is not quiet at the end minute (07:00 CET)", night, "2026-01-16T06:00:00.000Z", null],
      [
        "ends at 07:00 summer time in summer (22:00 CEST)",
        night,
        "2026-07-01T20:00:00.000Z",
        "2026-07-02T05:00:00.000Z"
      ],
      [
        "keeps a same-day period to that day (13:00 CET)",
        office,
        "2026-01-15T12:00:00.000Z",
        "2026-01-15T16:00:00.000Z"
      ],
      ["is not quiet after a same-day period (17:00 CET)", office, "2026-01-15T16:00:00.000Z", null],
      ["is not quiet before a same-day period (08:59 CET)", office, "2026-01-15T07:59:00.000Z", null],
      [
        "follows a zone with a 45-minute offset (22:45 in Kathmandu)",
        quiet("22:00", "06:00", "Asia/Kathmandu"),
        "2026-01-15T17:00:00.000Z",
        "2026-01-16T00:15:00.000Z"
      ]
    ];
    it.each(rows)("%s", (_name, hours, iso, expected) => expect(endAt(hours, iso)).toBe(expected));
  });

  describe("when Europe/Berlin springs forward (2026-03-29 02:00 CET -> 03:00 CEST)", () => {
    const rows: Row[] = [
      [
        "makes the night an hour shorter (23:00 CET)",
        quiet("22:00", "07:00", "Europe/Berlin"),
        "2026-03-28T22:00:00.000Z",
        "2026-03-29T05:00:00.000Z"
      ],
      [
        "ends a period whose end was skipped at the jump (01:30 CET, end 02:30)",
        quiet("22:00", "02:30", "Europe/Berlin"),
        "2026-03-29T00:30:00.000Z",
        "2026-03-29T01:00:00.000Z"
      ],
      [
        "is not quiet right after that jump (03:00 CEST)",
        quiet("22:00", "02:30", "Europe/Berlin"),
        "2026-03-29T01:00:00.000Z",
        null
      ],
      [
        "does not start a period whose start was skipped before the jump (01:59:59 CET)",
        quiet("02:30", "06:00", "Europe/Berlin"),
        "2026-03-29T00:59:59.000Z",
        null
      ],
      [
        "starts a period whose start was skipped at the jump (03:00 CEST)",
        quiet("02:30", "06:00", "Europe/Berlin"),
        "2026-03-29T01:00:00.000Z",
        "2026-03-29T04:00:00.000Z"
      ],
      [
        "merges two periods the jump made touch (02:40-02:10 leaves no gap that night)",
        quiet("02:40", "02:10", "Europe/Berlin"),
        "2026-03-28T12:00:00.000Z",
        "2026-03-30T00:10:00.000Z"
      ]
    ];
    it.each(rows)("%s", (_name, hours, iso, expected) => expect(endAt(hours, iso)).toBe(expected));
  });

  describe("when Europe/Berlin falls back (2026-10-25 03:00 CEST -> 02:00 CET)", () => {
    const rows: Row[] = [
      [
        "makes the night an hour longer (22:00 CEST)",
        quiet("22:00", "07:00", "Europe/Berlin"),
        "2026-10-24T20:00:00.000Z",
        "2026-10-25T06:00:00.000Z"
      ],
      [
        "ends at the first 02:30 when the end is in the repeated hour (01:00 CEST)",
        quiet("22:00", "02:30", "Europe/Berlin"),
        "2026-10-24T23:00:00.000Z",
        "2026-10-25T00:30:00.000Z"
      ],
      [
        "does not come back when 02:15 comes round again (02:15 CET)",
        quiet("22:00", "02:30", "Europe/Berlin"),
        "2026-10-25T01:15:00.000Z",
        null
      ],
      [
        "starts at the first 02:30 when the start is in the repeated hour (02:30 CEST)",
        quiet("02:30", "06:00", "Europe/Berlin"),
        "2026-10-25T00:30:00.000Z",
        "2026-10-25T05:00:00.000Z"
      ],
      [
        "stays quiet through the repeated hour (02:15 CET)",
        quiet("02:30", "06:00", "Europe/Berlin"),
        "2026-10-25T01:15:00.000Z",
        "2026-10-25T05:00:00.000Z"
      ],
      [
        "is not quiet before the first 02:30 (02:29 CEST)",
        quiet("02:30", "06:00", "Europe/Berlin"),
        "2026-10-25T00:29:00.000Z",
        null
      ]
    ];
    it.each(rows)("%s", (_name, hours, iso, expected) => expect(endAt(hours, iso)).toBe(expected));
  });

  describe("when America/New_York changes clocks (2026-03-08 and 2026-11-01)", () => {
    const rows: Row[] = [
      [
        "ends a spring-forward night at 07:00 EDT (22:00 EST)",
        quiet("22:00", "07:00", "America/New_York"),
        "2026-03-08T03:00:00.000Z",
        "2026-03-08T11:00:00.000Z"
      ],
      [
        "ends a period whose end was skipped at the jump (01:30 EST, end 02:30)",
        quiet("23:00", "02:30", "America/New_York"),
        "2026-03-08T06:30:00.000Z",
        "2026-03-08T07:00:00.000Z"
      ],
      [
        "ends a fall-back night at 07:00 EST (22:00 EDT)",
        quiet("22:00", "07:00", "America/New_York"),
        "2026-11-01T02:00:00.000Z",
        "2026-11-01T12:00:00.000Z"
      ],
      [
        "ends at the first 01:30 when the end is in the repeated hour (00:00 EDT)",
        quiet("23:00", "01:30", "America/New_York"),
        "2026-11-01T04:00:00.000Z",
        "2026-11-01T05:30:00.000Z"
      ],
      [
        "does not come back when 01:15 comes round again (01:15 EST)",
        quiet("23:00", "01:30", "America/New_York"),
        "2026-11-01T06:15:00.000Z",
        null
      ]
    ];
    it.each(rows)("%s", (_name, hours, iso, expected) => expect(endAt(hours, iso)).toBe(expected));
  });

  it("never returns an end that is itself quiet, so a held step runs when it wakes", () => {
    const cases: [QuietHours, string][] = [
      [quiet("02:40", "02:10", "Europe/Berlin"), "2026-03-28T12:00:00.000Z"],
      [quiet("22:00", "02:30", "Europe/Berlin"), "2026-10-24T23:00:00.000Z"],
      [quiet("23:00", "02:30", "America/New_York"), "2026-03-08T06:30:00.000Z"]
    ];
    for (const [hours, iso] of cases) {
      const end = quietHoursEnd(hours, Date.parse(iso));
      expect(end).not.toBeNull();
      expect(quietHoursEnd(hours, end as number)).toBeNull();
    }
  });

  it("pages anyway when the time zone is unknown or the times are malformed", () => {
    expect(endAt(quiet("22:00", "07:00", "Mars/Olympus_Mons"), "2026-01-15T23:00:00.000Z")).toBeNull();
    expect(endAt(quiet("22:00", "7:00", "Europe/Berlin"), "2026-01-15T23:00:00.000Z")).toBeNull();
    expect(endAt(quiet("22:00", "22:00", "Europe/Berlin"), "2026-01-15T23:00:00.000Z")).toBeNull();
  });
});
