import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {patternSegments, rotationSegments} from "../../src/domain/schedules/layer-shifts.js";
import {finalShifts, gaps, onCallAt} from "../../src/domain/schedules/on-call.js";
import type {
  RotationLayer,
  ScheduleLayer,
  ScheduleOverride,
  ScheduleRules,
  ShiftPatternLayer
} from "../../src/domain/schedules/schedule.js";
import {scheduleProblems} from "../../src/domain/schedules/schedule-problems.js";

const ZONES = ["Europe/Berlin", "Asia/Kolkata", "Australia/Adelaide", "America/New_York", "Australia/Lord_Howe", "UTC"];
const HOUR = 3_600_000;
// 2026-01-01 to 2027-01-01: both daylight-saving changes of each zone, north and south.
const YEAR_START = Date.UTC(2026, 0, 1);
const YEAR_LENGTH = 365 * 24 * HOUR;
const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
const instantIn = fc.integer({min: 0, max: YEAR_LENGTH}).map((offset) => YEAR_START + offset);
const person = fc.constantFrom("p1", "p2", "p3", "p4");

const rotationLayer: fc.Arbitrary<RotationLayer> = fc
  .record({
    members: fc.array(person, {minLength: 1, maxLength: 3}),
    length: fc.oneof(
      fc.integer({min: 1, max: 48}).map((hours) => ({shift_length_hours: hours})),
      fc.integer({min: 1, max: 3}).map((days) => ({shift_length_days: days}))
    ),
    starts_at: instantIn.map((instant) => new Date(instant - 30 * 24 * HOUR).toISOString()),
    restricted: fc.option(
      fc.record({
        weekdays: fc.subarray(["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const, {minLength: 1}),
        start: fc.integer({min: 0, max: 95}).map((quarter) => quarter * 15),
        hours: fc.integer({min: 1, max: 23})
      })
    )
  })
  .map(({members, length, starts_at, restricted}) => ({
    type: "rotation",
    members,
    ...length,
    starts_at,
    ...(restricted && {
      restrictions: {
        weekdays: [...restricted.weekdays],
        windows: [{start: hhmm(restricted.start), end: hhmm((restricted.start + restricted.hours * 60) % 1440)}]
      }
    })
  }));

const patternLayer: fc.Arbitrary<ShiftPatternLayer> = fc
  .record({
    starts: fc.uniqueArray(fc.integer({min: 0, max: 47}), {minLength: 1, maxLength: 3}),
    crewCount: fc.integer({min: 1, max: 4}),
    cycleSeed: fc.array(fc.array(fc.integer({min: -1, max: 3}), {minLength: 3, maxLength: 3}), {
      minLength: 1,
      maxLength: 5
    }),
    startsOn: instantIn.map((instant) => new Date(instant - 30 * 24 * HOUR).toISOString().slice(0, 10))
  })
  .map(({starts, crewCount, cycleSeed, startsOn}) => {
    const sorted = [...starts].sort((a, b) => a - b);
    const crews = Array.from({length: crewCount}, (_, index) => ({name: `crew${index}`, target: `p${index + 1}`}));
    return {
      type: "shift_pattern",
      shifts: sorted.map((halfHours, index) => ({name: `shift${index}`, starts: hhmm(halfHours * 30)})),
      crews,
      cycle: cycleSeed.map((day) =>
        sorted.map((_, index) => (day[index] < 0 ? null : crews[day[index] % crewCount].name))
      ),
      starts_on: startsOn
    };
  });

/** Overrides laid end to end with room between, so none overlaps another. */
const overrides: fc.Arbitrary<ScheduleOverride[]> = fc
  .array(fc.record({pause: fc.integer({min: 0, max: 72}), length: fc.integer({min: 1, max: 48}), who: person}), {
    maxLength: 4
  })
  .chain((pieces) =>
    instantIn.map((first) => {
      let cursor = first;
      return pieces.map(({pause, length, who}, index) => {
        const start = cursor + pause * HOUR;
        cursor = start + length * HOUR;
        return {
          id: `ovr_${index}`,
          recipient_uuid: who,
          starts_at: new Date(start).toISOString(),
          ends_at: new Date(cursor).toISOString()
        };
      });
    })
  );

const schedule: fc.Arbitrary<ScheduleRules> = fc.record({
  timezone: fc.constantFrom(...ZONES),
  layers: fc.array(fc.oneof(rotationLayer, patternLayer) as fc.Arbitrary<ScheduleLayer>, {minLength: 1, maxLength: 3}),
  overrides
});

const range = fc
  .record({from: instantIn, hours: fc.integer({min: 1, max: 10 * 24})})
  .map(({from, hours}) => ({from, to: from + hours * HOUR}));

describe("schedule evaluation invariants", () => {
  it("generated schedules are valid ones", () => {
    fc.assert(
      fc.property(schedule, (rules) => {
        expect(scheduleProblems(rules)).toEqual([]);
      })
    );
  });

  it("final shifts and gaps partition the range: every instant has exactly one final on-call set or none", () => {
    fc.assert(
      fc.property(schedule, range, (rules, {from, to}) => {
        const pieces = [
          ...finalShifts(rules, from, to).map((shift) => ({...shift, gap: false})),
          ...gaps(rules, from, to).map((gap) => ({...gap, gap: true}))
        ].sort((a, b) => a.start - b.start);
        let cursor = from;
        for (const piece of pieces) {
          expect(piece.start).toBe(cursor);
          expect(piece.end).toBeGreaterThan(piece.start);
          cursor = piece.end;
        }
        expect(cursor).toBe(to);
      }),
      {numRuns: 150}
    );
  });

  it("onCallAt agrees with the final shifts at every sampled instant, and holds it", () => {
    fc.assert(
      fc.property(
        schedule,
        range,
        fc.array(fc.double({min: 0, max: 1, noNaN: true, maxExcluded: true})),
        (rules, {from, to}, samples) => {
          const shifts = finalShifts(rules, from, to);
          for (const sample of samples) {
            const instant = from + Math.floor(sample * (to - from));
            const expected = shifts.find((shift) => shift.start <= instant && instant < shift.end) ?? null;
            const found = onCallAt(rules, instant);
            expect(found?.target ?? null).toBe(expected?.target ?? null);
            expect(found?.origin ?? null).toEqual(expected?.origin ?? null);
            if (found && expected) {
              expect(found.start).toBeLessThanOrEqual(Math.max(expected.start, from));
              if (expected.start > from) expect(found.start).toBe(expected.start);
              if (expected.end < to) expect(found.end).toBe(expected.end);
            }
          }
        }
      ),
      {numRuns: 150}
    );
  });

  it("each layer's shifts are sorted and never overlap; unrestricted ones are contiguous", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.oneof(rotationLayer, patternLayer),
        range,
        (zone, layer, {from, to}) => {
          const segments =
            layer.type === "rotation"
              ? rotationSegments(layer, 0, zone, {from, to})
              : patternSegments(layer, 0, zone, {from, to});
          const contiguous =
            (layer.type === "rotation" && !layer.restrictions) ||
            (layer.type === "shift_pattern" && layer.cycle.every((day) => day.every((crew) => crew !== null)));
          segments.forEach((segment, index) => {
            expect(segment.end).toBeGreaterThan(segment.start);
            const previous = segments[index - 1];
            if (previous) {
              expect(segment.start).toBeGreaterThanOrEqual(previous.end);
              if (contiguous) expect(segment.start).toBe(previous.end);
            }
          });
        }
      ),
      {numRuns: 300}
    );
  });

  it("an override's final shift is exactly the override, wherever it falls", () => {
    fc.assert(
      fc.property(schedule, (rules) => {
        for (const override of rules.overrides) {
          const [start, end] = [Date.parse(override.starts_at), Date.parse(override.ends_at)];
          const shifts = finalShifts(rules, start - 24 * HOUR, end + 24 * HOUR).filter(
            (shift) => shift.origin.kind === "override" && shift.origin.override_id === override.id
          );
          expect(shifts).toEqual([
            {start, end, target: override.recipient_uuid, origin: {kind: "override", override_id: override.id}}
          ]);
        }
      }),
      {numRuns: 150}
    );
  });
});
