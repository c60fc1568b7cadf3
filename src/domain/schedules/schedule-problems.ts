import {isValidTimeZone} from "../recipient.js";
import {
  HH_MM,
  minutesOf,
  wallOfDate,
  WEEKDAYS,
  type LayerRestrictions,
  type RotationLayer,
  type ScheduleLayer,
  type ShiftPatternLayer
} from "./schedule.js";

/** A rule a schedule breaks, pointing into it with a JSON Pointer. */
export interface ScheduleProblem {
  pointer: string;
  detail: string;
}

const isInstant = (text: string) => /^\d{4}-\d{2}-\d{2}T/.test(text) && Number.isFinite(Date.parse(text));

function restrictionProblems(restrictions: LayerRestrictions, at: string): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  (restrictions.weekdays ?? []).forEach((day, index) => {
    if (!(WEEKDAYS as readonly string[]).includes(day))
      problems.push({pointer: `${at}/weekdays/${index}`, detail: `"${day}" is not one of ${WEEKDAYS.join(", ")}`});
  });
  if (restrictions.weekdays?.length === 0)
    problems.push({
      pointer: `${at}/weekdays`,
      detail: "no weekday: the layer would never apply; leave it out for every day"
    });
  (restrictions.windows ?? []).forEach((window, index) => {
    for (const end of ["start", "end"] as const) {
      const time = window[end];
      if (!HH_MM.test(time) || (end === "start" && time === "24:00"))
        problems.push({pointer: `${at}/windows/${index}/${end}`, detail: `"${time}" is not a time HH:MM`});
    }
    if (window.start === window.end)
      problems.push({pointer: `${at}/windows/${index}`, detail: "a window that starts where it ends is empty"});
  });
  return problems;
}

function rotationProblems(layer: RotationLayer, at: string): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  if (layer.members.length === 0) problems.push({pointer: `${at}/members`, detail: "a rotation needs a member"});
  const lengths = (["shift_length_hours", "shift_length_days", "shift_length_weeks"] as const).filter(
    (field) => layer[field] !== undefined
  );
  if (lengths.length !== 1)
    problems.push({
      pointer: at,
      detail: "give exactly one of shift_length_hours, shift_length_days, shift_length_weeks"
    });
  for (const field of lengths) {
    const value = layer[field] as number;
    if (!Number.isInteger(value) || value < 1)
      problems.push({pointer: `${at}/${field}`, detail: "a shift length is a whole number, at least 1"});
  }
  if (!isInstant(layer.starts_at))
    problems.push({pointer: `${at}/starts_at`, detail: `"${layer.starts_at}" is not an ISO 8601 date-time`});
  if (layer.restrictions) problems.push(...restrictionProblems(layer.restrictions, `${at}/restrictions`));
  return problems;
}

function patternProblems(layer: ShiftPatternLayer, at: string): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  if (layer.shifts.length === 0) problems.push({pointer: `${at}/shifts`, detail: "a shift pattern needs a shift"});
  layer.shifts.forEach((shift, index) => {
    if (!HH_MM.test(shift.starts) || shift.starts === "24:00")
      problems.push({pointer: `${at}/shifts/${index}/starts`, detail: `"${shift.starts}" is not a time HH:MM`});
    else if (index > 0 && minutesOf(shift.starts) <= minutesOf(layer.shifts[index - 1].starts))
      problems.push({
        pointer: `${at}/shifts/${index}/starts`,
        detail: "shifts are listed in the order they start in the day, each later than the one before"
      });
    if (layer.shifts.findIndex((other) => other.name === shift.name) !== index)
      problems.push({pointer: `${at}/shifts/${index}/name`, detail: `two shifts are named "${shift.name}"`});
  });
  if (layer.crews.length === 0) problems.push({pointer: `${at}/crews`, detail: "a shift pattern needs a crew"});
  layer.crews.forEach((crew, index) => {
    if (layer.crews.findIndex((other) => other.name === crew.name) !== index)
      problems.push({pointer: `${at}/crews/${index}/name`, detail: `two crews are named "${crew.name}"`});
  });
  if (layer.cycle.length === 0) problems.push({pointer: `${at}/cycle`, detail: "the crew cycle needs a day"});
  layer.cycle.forEach((day, dayIndex) => {
    if (day.length !== layer.shifts.length)
      problems.push({
        pointer: `${at}/cycle/${dayIndex}`,
        detail: `a day of the cycle names a crew (or null) for each of the ${layer.shifts.length} shift(s)`
      });
    day.forEach((crew, shiftIndex) => {
      if (crew !== null && !layer.crews.some((known) => known.name === crew))
        problems.push({pointer: `${at}/cycle/${dayIndex}/${shiftIndex}`, detail: `no crew is named "${crew}"`});
    });
  });
  if (wallOfDate(layer.starts_on) === null)
    problems.push({pointer: `${at}/starts_on`, detail: `"${layer.starts_on}" is not a date YYYY-MM-DD`});
  return problems;
}

/**
 * What makes a schedule impossible to evaluate, each pointing at its field (`at` prefixes the
 * pointers). Whether members and crews name existing recipients is for the caller to check.
 */
export function scheduleProblems(schedule: {timezone: string; layers: ScheduleLayer[]}, at = ""): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  if (!isValidTimeZone(schedule.timezone))
    problems.push({pointer: `${at}/timezone`, detail: `"${schedule.timezone}" is not an IANA time zone`});
  if (schedule.layers.length === 0) problems.push({pointer: `${at}/layers`, detail: "a schedule needs a layer"});
  schedule.layers.forEach((layer, index) =>
    problems.push(
      ...(layer.type === "rotation"
        ? rotationProblems(layer, `${at}/layers/${index}`)
        : patternProblems(layer, `${at}/layers/${index}`))
    )
  );
  return problems;
}
