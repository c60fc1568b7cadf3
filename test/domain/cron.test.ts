import {describe, expect, it} from "vitest";
import {cronProblem, parseCron} from "../../src/domain/cron.js";

describe("cron expressions", () => {
  it.each([
    ["bad", "expected 5 fields"],
    ["* * * *", "expected 5 fields"],
    ["* * * * * *", "expected 5 fields"],
    ["60 * * * *", 'minute "60"'],
    ["* 24 * * *", 'hour "24"'],
    ["* * 0 * *", 'day of month "0"'],
    ["* * * 13 *", 'month "13"'],
    ["* * * * 8", 'day of week "8"'],
    ["5-1 * * * *", "runs backwards"],
    ["*/0 * * * *", "positive integer"],
    ["0 0 L * *", 'day of month "L"'],
    ["0 12 * * 5#2", 'day of week "5#2"'],
    ["1,,2 * * * *", "malformed"],
    ["0 0 31 2 *", "never matches"]
  ])("refuses %j (%s)", (expression, problem) => {
    expect(cronProblem(expression, "UTC", Date.UTC(2026, 0, 1))).toContain(problem);
  });

  it("accepts the usual forms", () => {
    for (const expression of [
      "* * * * *",
      "*/5 * * * *",
      "0 3 * * *",
      "0 9-17 * * mon-fri",
      "15 2 1 jan,jul *",
      " 0  3 * * * "
    ]) {
      expect(cronProblem(expression, "Europe/Berlin", Date.UTC(2026, 0, 1)), expression).toBeNull();
    }
  });

  it("expands fields to their values", () => {
    expect(parseCron("*/20 1-3 * * sun,7")).toMatchObject({
      minutes: [0, 20, 40],
      hours: [1, 2, 3],
      daysOfWeek: new Set([0]),
      dayOfWeekRestricted: true,
      dayOfMonthRestricted: false,
      hourWildcard: false
    });
  });
});
