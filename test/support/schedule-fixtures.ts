import type {
  RotationLayer,
  ScheduleLayer,
  ScheduleOverride,
  ScheduleRules,
  ShiftPatternLayer
} from "../../src/domain/schedules/schedule.js";
import type {FinalShift} from "../../src/domain/schedules/on-call.js";

export const rules = (
  timezone: string,
  layers: ScheduleLayer[],
  overrides: ScheduleOverride[] = []
): ScheduleRules => ({
  timezone,
  layers,
  overrides
});

export const rotation = (members: string[], startsAt: string, extra: Partial<RotationLayer> = {}): RotationLayer => ({
  type: "rotation",
  members,
  starts_at: startsAt,
  ...(extra.shift_length_days || extra.shift_length_weeks ? {} : {shift_length_hours: 12}),
  ...extra
});

/**
 * The 3-shift plant of docs/schedules.md: early 06:00, late 14:00, night 22:00, four crews
 * working two earlies, two lates, two nights and two days off, two days apart.
 */
export function threeShiftPlant(startsOn: string, crews: Record<string, string>): ShiftPatternLayer {
  return {
    type: "shift_pattern",
    name: "Line 3",
    shifts: [
      {name: "early", starts: "06:00"},
      {name: "late", starts: "14:00"},
      {name: "night", starts: "22:00"}
    ],
    crews: Object.entries(crews).map(([name, target]) => ({name, target})),
    cycle: [
      ["A", "D", "C"],
      ["A", "D", "C"],
      ["B", "A", "D"],
      ["B", "A", "D"],
      ["C", "B", "A"],
      ["C", "B", "A"],
      ["D", "C", "B"],
      ["D", "C", "B"]
    ],
    starts_on: startsOn
  };
}

/** A final shift in readable form: ISO instants, the target, and what put it there. */
export function readable(shift: FinalShift | null) {
  if (!shift) return null;
  const why =
    shift.origin.kind === "override"
      ? `override ${shift.origin.override_id}`
      : shift.origin.kind === "rotation"
        ? `layer ${shift.origin.layer} turn ${shift.origin.turn}`
        : `layer ${shift.origin.layer} ${shift.origin.shift} crew ${shift.origin.crew}`;
  return `${new Date(shift.start).toISOString()} - ${new Date(shift.end).toISOString()} ${shift.target} (${why})`;
}
