import {describe, expect, it} from "vitest";
import {readableTime} from "../../src/lib/local-time.js";

describe("readableTime", () => {
  it("reads an instant on the zone's wall clock with the zone's abbreviation, summer and winter", () => {
    expect(readableTime(Date.parse("2026-11-28T06:30:33.948Z"), "Europe/Berlin")).toBe("28 Nov 2026, 07:30:33 CET");
    expect(readableTime(Date.parse("2026-07-01T22:05:00Z"), "Europe/Berlin")).toBe("2 Jul 2026, 00:05:00 CEST");
    expect(readableTime(Date.parse("2026-11-28T06:30:33Z"), "UTC")).toBe("28 Nov 2026, 06:30:33 UTC");
  });
});
