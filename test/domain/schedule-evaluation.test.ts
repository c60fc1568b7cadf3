import {describe, expect, it} from "vitest";
import {finalShifts, gaps, onCallAt} from "../../src/domain/schedules/on-call.js";
import type {ScheduleRules, ShiftPatternLayer} from "../../src/domain/schedules/schedule.js";
import {readable, rotation, rules, threeShiftPlant} from "../support/schedule-fixtures.js";

const at = (iso: string) => Date.parse(iso);
const crews = {A: "anna", B: "bert", C: "cem", D: "dora"};

// Each row: what it shows, the schedule, the instant asked about, the final shift expected (or null).
type Row = [string, ScheduleRules, string, string | null];

function shiftsBetween(schedule: ScheduleRules, from: string, to: string): string[] {
  return finalShifts(schedule, at(from), at(to)).map((shift) => readable(shift) as string);
}

describe("a 3-shift plant in Europe/Berlin (early 06:00, late 14:00, night 22:00, four crews)", () => {
  const plant = rules("Europe/Berlin", [threeShiftPlant("2026-03-27", crews)]);
  const rows: Row[] = [
    [
      "the night before clocks spring forward lasts 7 hours (22:00 CET to 06:00 CEST)",
      plant,
      "2026-03-28T23:30:00.000Z",
      "2026-03-28T21:00:00.000Z - 2026-03-29T04:00:00.000Z cem (layer 0 night crew C)"
    ],
    [
      "the night's last millisecond is still the night crew's",
      plant,
      "2026-03-29T03:59:59.999Z",
      "2026-03-28T21:00:00.000Z - 2026-03-29T04:00:00.000Z cem (layer 0 night crew C)"
    ],
    [
      "the early shift of the change day starts at 06:00 summer time, with the next day of the cycle",
      plant,
      "2026-03-29T04:00:00.000Z",
      "2026-03-29T04:00:00.000Z - 2026-03-29T12:00:00.000Z bert (layer 0 early crew B)"
    ],
    [
      "the night before clocks fall back lasts 9 hours (22:00 CEST to 06:00 CET), day 211 of the cycle",
      plant,
      "2026-10-25T00:30:00.000Z",
      "2026-10-24T20:00:00.000Z - 2026-10-25T05:00:00.000Z dora (layer 0 night crew D)"
    ],
    [
      "the repeated hour (02:30 CET, the second time) is still that night",
      plant,
      "2026-10-25T01:30:00.000Z",
      "2026-10-24T20:00:00.000Z - 2026-10-25T05:00:00.000Z dora (layer 0 night crew D)"
    ],
    [
      "an ordinary winter night is 8 hours (day 249 of the cycle)",
      plant,
      "2026-12-01T23:00:00.000Z",
      "2026-12-01T21:00:00.000Z - 2026-12-02T05:00:00.000Z cem (layer 0 night crew C)"
    ],
    ["nobody is on call before the pattern's first shift", plant, "2026-03-27T04:59:59.999Z", null],
    [
      "the first shift starts at 06:00 local on starts_on",
      plant,
      "2026-03-27T05:00:00.000Z",
      "2026-03-27T05:00:00.000Z - 2026-03-27T13:00:00.000Z anna (layer 0 early crew A)"
    ]
  ];
  it.each(rows)("%s", (_name, schedule, instant, expected) =>
    expect(readable(onCallAt(schedule, at(instant)))).toBe(expected)
  );

  it("lists the final shifts across the spring change, cut to the range asked for", () => {
    expect(shiftsBetween(plant, "2026-03-28T20:00:00.000Z", "2026-03-29T12:00:00.000Z")).toEqual([
      "2026-03-28T20:00:00.000Z - 2026-03-28T21:00:00.000Z dora (layer 0 late crew D)",
      "2026-03-28T21:00:00.000Z - 2026-03-29T04:00:00.000Z cem (layer 0 night crew C)",
      "2026-03-29T04:00:00.000Z - 2026-03-29T12:00:00.000Z bert (layer 0 early crew B)"
    ]);
  });
});

describe("leap days and half-hour zones", () => {
  const kolkataDaily = rules("Asia/Kolkata", [
    rotation(["asha", "bala", "chitra"], "2024-02-27T03:30:00.000Z", {shift_length_days: 1})
  ]);
  const adelaide: ShiftPatternLayer = {
    type: "shift_pattern",
    shifts: [
      {name: "day", starts: "09:00"},
      {name: "night", starts: "21:00"}
    ],
    crews: [
      {name: "X", target: "xavier"},
      {name: "Y", target: "yara"}
    ],
    cycle: [
      ["X", "Y"],
      ["Y", "X"]
    ],
    starts_on: "2024-02-28"
  };
  const adelaidePlant = rules("Australia/Adelaide", [adelaide]);
  const rows: Row[] = [
    [
      "a daily rotation in Kolkata (UTC+5:30) gives 29 February its own turn",
      kolkataDaily,
      "2024-02-29T12:00:00.000Z",
      "2024-02-29T03:30:00.000Z - 2024-03-01T03:30:00.000Z chitra (layer 0 turn 2)"
    ],
    [
      "and 1 March the next one, back to the first member",
      kolkataDaily,
      "2024-03-01T03:30:00.000Z",
      "2024-03-01T03:30:00.000Z - 2024-03-02T03:30:00.000Z asha (layer 0 turn 3)"
    ],
    [
      "29 February is day 1 of a pattern started on 28 February (Adelaide, UTC+10:30)",
      adelaidePlant,
      "2024-02-29T00:00:00.000Z",
      "2024-02-28T22:30:00.000Z - 2024-02-29T10:30:00.000Z yara (layer 0 day crew Y)"
    ],
    [
      "1 March is day 2, so the cycle starts over",
      adelaidePlant,
      "2024-03-01T00:00:00.000Z",
      "2024-02-29T22:30:00.000Z - 2024-03-01T10:30:00.000Z xavier (layer 0 day crew X)"
    ],
    [
      "the night Adelaide falls back (03:00 ACDT to 02:00 ACST) lasts 13 hours",
      adelaidePlant,
      "2024-04-06T16:00:00.000Z",
      "2024-04-06T10:30:00.000Z - 2024-04-06T23:30:00.000Z yara (layer 0 night crew Y)"
    ],
    [
      "the night Adelaide springs forward (02:00 ACST to 03:00 ACDT) lasts 11 hours",
      adelaidePlant,
      "2024-10-05T16:00:00.000Z",
      "2024-10-05T11:30:00.000Z - 2024-10-05T22:30:00.000Z yara (layer 0 night crew Y)"
    ]
  ];
  it.each(rows)("%s", (_name, schedule, instant, expected) =>
    expect(readable(onCallAt(schedule, at(instant)))).toBe(expected)
  );
});

describe("rotations", () => {
  const berlinTwelve = rules("Europe/Berlin", [rotation(["maria", "jonas"], "2026-03-28T07:00:00.000Z")]);
  const rows: Row[] = [
    [
      "12-hour shifts hand off at 08:00 and 20:00 local: the night of the spring change is 11 hours",
      berlinTwelve,
      "2026-03-29T05:59:59.999Z",
      "2026-03-28T19:00:00.000Z - 2026-03-29T06:00:00.000Z jonas (layer 0 turn 1)"
    ],
    [
      "and the day after is 12 hours again, from 08:00 CEST",
      berlinTwelve,
      "2026-03-29T06:00:00.000Z",
      "2026-03-29T06:00:00.000Z - 2026-03-29T18:00:00.000Z maria (layer 0 turn 2)"
    ],
    ["nobody is on call before starts_at", berlinTwelve, "2026-03-28T06:59:59.999Z", null],
    [
      "a weekly rotation hands off on the same weekday and hour through the autumn change",
      rules("Europe/Berlin", [rotation(["maria", "jonas"], "2026-10-19T07:00:00.000Z", {shift_length_weeks: 1})]),
      "2026-10-26T07:59:59.999Z",
      "2026-10-19T07:00:00.000Z - 2026-10-26T08:00:00.000Z maria (layer 0 turn 0)"
    ]
  ];
  it.each(rows)("%s", (_name, schedule, instant, expected) =>
    expect(readable(onCallAt(schedule, at(instant)))).toBe(expected)
  );
});

describe("layers, restrictions and overrides", () => {
  // Mon 2026-01-05: the office rotation (09:00-17:00 on weekdays) sits on a week-long base rotation.
  const office = rotation(["olga"], "2026-01-05T08:00:00.000Z", {
    shift_length_weeks: 1,
    restrictions: {weekdays: ["mon", "tue", "wed", "thu", "fri"], windows: [{start: "09:00", end: "17:00"}]}
  });
  const base = rotation(["bernd"], "2026-01-01T00:00:00.000Z", {shift_length_weeks: 1});
  const layered = rules("Europe/Berlin", [base, office]);

  it("the higher layer wins within its restriction and the lower one shows through elsewhere", () => {
    expect(shiftsBetween(layered, "2026-01-04T23:00:00.000Z", "2026-01-05T23:00:00.000Z")).toEqual([
      "2026-01-04T23:00:00.000Z - 2026-01-05T08:00:00.000Z bernd (layer 0 turn 0)",
      "2026-01-05T08:00:00.000Z - 2026-01-05T16:00:00.000Z olga (layer 1 turn 0)",
      "2026-01-05T16:00:00.000Z - 2026-01-05T23:00:00.000Z bernd (layer 0 turn 0)"
    ]);
  });

  it("the weekend belongs to the lower layer", () => {
    expect(shiftsBetween(layered, "2026-01-10T08:00:00.000Z", "2026-01-10T16:00:00.000Z")).toEqual([
      "2026-01-10T08:00:00.000Z - 2026-01-10T16:00:00.000Z bernd (layer 0 turn 1)"
    ]);
  });

  it("a window crossing midnight belongs to the weekday it starts on", () => {
    const fridayNights = rules("Europe/Berlin", [
      rotation(["nina"], "2026-01-01T00:00:00.000Z", {
        shift_length_weeks: 1,
        restrictions: {weekdays: ["fri"], windows: [{start: "22:00", end: "06:00"}]}
      })
    ]);
    expect(shiftsBetween(fridayNights, "2026-01-08T00:00:00.000Z", "2026-01-11T00:00:00.000Z")).toEqual([
      "2026-01-09T21:00:00.000Z - 2026-01-10T05:00:00.000Z nina (layer 0 turn 1)"
    ]);
    expect(gaps(fridayNights, at("2026-01-09T00:00:00.000Z"), at("2026-01-11T00:00:00.000Z"))).toEqual([
      {start: at("2026-01-09T00:00:00.000Z"), end: at("2026-01-09T21:00:00.000Z")},
      {start: at("2026-01-10T05:00:00.000Z"), end: at("2026-01-11T00:00:00.000Z")}
    ]);
  });

  it("onCallAt gives the whole final shift: the restricted window, or the lower layer's until its hand-off", () => {
    expect(readable(onCallAt(layered, at("2026-01-07T12:00:00.000Z")))).toBe(
      "2026-01-07T08:00:00.000Z - 2026-01-07T16:00:00.000Z olga (layer 1 turn 0)"
    );
    expect(readable(onCallAt(layered, at("2026-01-07T17:00:00.000Z")))).toBe(
      "2026-01-07T16:00:00.000Z - 2026-01-08T00:00:00.000Z bernd (layer 0 turn 0)"
    );
  });

  it("an override wins over every layer for exactly its span", () => {
    const covered = rules(
      "Europe/Berlin",
      [base, office],
      [
        {
          id: "ovr_1",
          recipient_uuid: "paula",
          starts_at: "2026-01-05T10:00:00.000Z",
          ends_at: "2026-01-05T17:00:00.000Z"
        }
      ]
    );
    expect(shiftsBetween(covered, "2026-01-05T07:00:00.000Z", "2026-01-05T18:00:00.000Z")).toEqual([
      "2026-01-05T07:00:00.000Z - 2026-01-05T08:00:00.000Z bernd (layer 0 turn 0)",
      "2026-01-05T08:00:00.000Z - 2026-01-05T10:00:00.000Z olga (layer 1 turn 0)",
      "2026-01-05T10:00:00.000Z - 2026-01-05T17:00:00.000Z paula (override ovr_1)",
      "2026-01-05T17:00:00.000Z - 2026-01-05T18:00:00.000Z bernd (layer 0 turn 0)"
    ]);
    expect(readable(onCallAt(covered, at("2026-01-05T16:59:59.999Z")))).toBe(
      "2026-01-05T10:00:00.000Z - 2026-01-05T17:00:00.000Z paula (override ovr_1)"
    );
  });

  it("a crew left out of a day's shift leaves a gap, and an override can fill it", () => {
    const plant = threeShiftPlant("2026-01-05", crews);
    const noNights = {...plant, cycle: plant.cycle.map(([early, late]) => [early, late, null])};
    const schedule = rules("Europe/Berlin", [noNights]);
    expect(gaps(schedule, at("2026-01-06T12:00:00.000Z"), at("2026-01-07T12:00:00.000Z"))).toEqual([
      {start: at("2026-01-06T21:00:00.000Z"), end: at("2026-01-07T05:00:00.000Z")}
    ]);
    const filled = {
      ...schedule,
      overrides: [
        {
          id: "ovr_2",
          recipient_uuid: "paula",
          starts_at: "2026-01-06T21:00:00.000Z",
          ends_at: "2026-01-07T05:00:00.000Z"
        }
      ]
    };
    expect(gaps(filled, at("2026-01-06T12:00:00.000Z"), at("2026-01-07T12:00:00.000Z"))).toEqual([]);
  });
});
