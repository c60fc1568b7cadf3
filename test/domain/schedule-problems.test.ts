import {describe, expect, it} from "vitest";
import type {ScheduleLayer} from "../../src/domain/schedules/schedule.js";
import {overlappingOverride} from "../../src/domain/schedules/schedule.js";
import {scheduleProblems} from "../../src/domain/schedules/schedule-problems.js";
import {rotation, threeShiftPlant} from "../support/schedule-fixtures.js";

const plant = threeShiftPlant("2026-01-05", {A: "a", B: "b", C: "c", D: "d"});
const pointersOf = (timezone: string, layers: ScheduleLayer[]) =>
  scheduleProblems({timezone, layers}).map((problem) => problem.pointer);

describe("scheduleProblems", () => {
  // Each row: what is wrong, the zone, the layers, the pointers named.
  const rows: [string, string, ScheduleLayer[], string[]][] = [
    ["nothing", "Europe/Berlin", [plant, rotation(["a"], "2026-01-01T08:00:00Z")], []],
    ["an unknown zone", "Europe/Atlantis", [plant], ["/timezone"]],
    ["no layer", "UTC", [], ["/layers"]],
    ["a rotation without members", "UTC", [rotation([], "2026-01-01T08:00:00Z")], ["/layers/0/members"]],
    [
      "two shift lengths",
      "UTC",
      [rotation(["a"], "2026-01-01T08:00:00Z", {shift_length_days: 1, shift_length_hours: 8})],
      ["/layers/0"]
    ],
    [
      "a zero shift length",
      "UTC",
      [rotation(["a"], "2026-01-01T08:00:00Z", {shift_length_hours: 0})],
      ["/layers/0/shift_length_hours"]
    ],
    ["a start that is no instant", "UTC", [rotation(["a"], "tomorrow")], ["/layers/0/starts_at"]],
    [
      "bad restrictions",
      "UTC",
      [
        rotation(["a"], "2026-01-01T08:00:00Z", {
          restrictions: {
            weekdays: ["someday" as "mon"],
            windows: [
              {start: "25:00", end: "08:00"},
              {start: "08:00", end: "08:00"}
            ]
          }
        })
      ],
      [
        "/layers/0/restrictions/weekdays/0",
        "/layers/0/restrictions/windows/0/start",
        "/layers/0/restrictions/windows/1"
      ]
    ],
    ["a pattern with no crew", "UTC", [{...plant, crews: [], cycle: [[null, null, null]]}], ["/layers/0/crews"]],
    ["a cycle naming an unknown crew", "UTC", [{...plant, cycle: [["A", "E", "C"]]}], ["/layers/0/cycle/0/1"]],
    ["a cycle day of the wrong length", "UTC", [{...plant, cycle: [["A", "B"]]}], ["/layers/0/cycle/0"]],
    [
      "shifts out of order",
      "UTC",
      [{...plant, shifts: [plant.shifts[1], plant.shifts[0], plant.shifts[2]]}],
      ["/layers/0/shifts/1/starts"]
    ],
    ["no such date", "UTC", [{...plant, starts_on: "2026-02-29"}], ["/layers/0/starts_on"]]
  ];
  it.each(rows)("names %s", (_name, zone, layers, pointers) => expect(pointersOf(zone, layers)).toEqual(pointers));
});

describe("overlappingOverride", () => {
  const existing = [
    {id: "ovr_1", recipient_uuid: "a", starts_at: "2026-01-05T08:00:00Z", ends_at: "2026-01-05T16:00:00Z"}
  ];
  it.each([
    ["ends as the other starts", "2026-01-05T00:00:00Z", "2026-01-05T08:00:00Z", null],
    ["starts as the other ends", "2026-01-05T16:00:00Z", "2026-01-05T20:00:00Z", null],
    ["shares a millisecond", "2026-01-05T15:59:59.999Z", "2026-01-05T20:00:00Z", "ovr_1"],
    ["lies inside", "2026-01-05T09:00:00Z", "2026-01-05T10:00:00Z", "ovr_1"],
    ["covers it", "2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z", "ovr_1"]
  ])("a candidate that %s", (_name, starts_at, ends_at, expected) =>
    expect(overlappingOverride(existing, {starts_at, ends_at})?.id ?? null).toBe(expected)
  );
});
