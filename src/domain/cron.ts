import {firstInstantAtWall, wallAt} from "./escalation/zoned-time.js";

/*
 * Klaxon's one cron dialect, used by heartbeat schedules and the nightly backup alike: five fields
 * (minute hour day-of-month month day-of-week), with lists, ranges, steps, month and weekday names
 * and 7 for Sunday; no seconds field and no Quartz extensions (L, W, #, ?). Days follow Vixie cron
 * (both day fields restricted: either matches), and clock changes follow Debian's cron (see
 * `occurrences`). Pure; instants are ms since the epoch, and the zone is always named.
 */

/** A parsed five-field cron expression: the matching values of each field. */
export interface CronExpression {
  minutes: number[];
  hours: number[];
  daysOfMonth: Set<number>;
  months: Set<number>;
  daysOfWeek: Set<number>;
  /** Vixie cron: when both day fields are restricted, a day matching either one matches. */
  dayOfMonthRestricted: boolean;
  dayOfWeekRestricted: boolean;
  /** A wildcard hour field runs in real time, so a wall time that occurs twice counts twice. */
  hourWildcard: boolean;
}

const MS_PER_MINUTE = 60_000;
const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;
// A 29 February schedule can be eight years away (2096 -> 2104); nothing valid is further.
const SEARCH_DAYS = 8 * 366 + 1;
// Clocks worldwide move by at most an hour; twice that bounds how far wall time and real time can disagree.
const SHIFT_BOUND_MS = 2 * MS_PER_HOUR;
// Offsets change by 30 or 60 minutes (Lord Howe moves by half an hour), so the repeated occurrence of a wall time is one of these later.
const REPEAT_SHIFTS_MS = [30 * MS_PER_MINUTE, MS_PER_HOUR];

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The value names count from (1 for months, 0 for weekdays). */
  namesFrom?: number;
}

const FIELDS: FieldSpec[] = [
  {name: "minute", min: 0, max: 59},
  {name: "hour", min: 0, max: 23},
  {name: "day of month", min: 1, max: 31},
  {name: "month", min: 1, max: 12, names: MONTH_NAMES, namesFrom: 1},
  // 7 is Sunday as well as 0, as in every common cron.
  {name: "day of week", min: 0, max: 7, names: DAY_NAMES, namesFrom: 0}
];

/** Thrown for an expression this module cannot read; the message says which field and why. */
class CronSyntaxError extends Error {
  override name = "CronSyntaxError";
}

function parseValue(text: string, spec: FieldSpec): number {
  const byName = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  const value = byName >= 0 ? byName + (spec.namesFrom ?? 0) : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(value) || value < spec.min || value > spec.max) {
    throw new CronSyntaxError(
      `${spec.name} "${text}" is not a value from ${spec.min} to ${spec.max}${spec.names ? " or a name" : ""}`
    );
  }
  return value;
}

function parseField(text: string, spec: FieldSpec): number[] {
  const values = new Set<number>();
  for (const part of text.split(",")) {
    const [range, stepText, extra] = part.split("/");
    if (extra !== undefined || range === "") throw new CronSyntaxError(`${spec.name} "${part}" is malformed`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!/^\d+$/.test(stepText ?? "1") || step < 1)
      throw new CronSyntaxError(`${spec.name} step "${stepText}" must be a positive integer`);
    let from: number;
    let to: number;
    if (range === "*") [from, to] = [spec.min, spec.max];
    else if (range.includes("-")) {
      const [low, high, more] = range.split("-");
      if (more !== undefined) throw new CronSyntaxError(`${spec.name} range "${range}" is malformed`);
      [from, to] = [parseValue(low, spec), parseValue(high, spec)];
      if (from > to) throw new CronSyntaxError(`${spec.name} range "${range}" runs backwards`);
    } else {
      from = parseValue(range, spec);
      // "5/15" means from 5 to the end in steps of 15.
      to = stepText === undefined ? from : spec.max;
    }
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return [...values].sort((a, b) => a - b);
}

/** Parses `minute hour day-of-month month day-of-week` (names and 7 for Sunday allowed). */
export function parseCron(expression: string): CronExpression {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5)
    throw new CronSyntaxError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = fields.map((field, index) =>
    parseField(field, FIELDS[index])
  );
  return {
    minutes,
    hours,
    daysOfMonth: new Set(daysOfMonth),
    months: new Set(months),
    daysOfWeek: new Set(daysOfWeek.map((day) => day % 7)),
    dayOfMonthRestricted: !fields[2].startsWith("*"),
    dayOfWeekRestricted: !fields[4].startsWith("*"),
    hourWildcard: fields[1].startsWith("*")
  };
}

function dayMatches(cron: CronExpression, midnightWall: number): boolean {
  const date = new Date(midnightWall);
  if (!cron.months.has(date.getUTCMonth() + 1)) return false;
  const byMonthDay = cron.daysOfMonth.has(date.getUTCDate());
  const byWeekDay = cron.daysOfWeek.has(date.getUTCDay());
  if (cron.dayOfMonthRestricted && cron.dayOfWeekRestricted) return byMonthDay || byWeekDay;
  return byMonthDay && byWeekDay;
}

/** The wall times (local readings written as UTC) the expression matches, from `fromWall` on, in order. */
function* matchingWalls(cron: CronExpression, fromWall: number): Generator<number> {
  const firstMidnight = fromWall - (((fromWall % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY);
  for (let day = 0; day < SEARCH_DAYS; day++) {
    const midnight = firstMidnight + day * MS_PER_DAY;
    if (!dayMatches(cron, midnight)) continue;
    for (const hour of cron.hours) {
      for (const minute of cron.minutes) {
        const wall = midnight + hour * MS_PER_HOUR + minute * MS_PER_MINUTE;
        if (wall >= fromWall) yield wall;
      }
    }
  }
}

/**
 * The instants at which the zone's clock reads `wall`, as the schedule counts them (the rule of
 * Debian's cron): a time skipped when clocks spring forward happens at the jump; a time that
 * occurs twice when clocks fall back counts once, at its first occurrence, unless the hour
 * field is a wildcard, whose schedules run in real time and so count both.
 */
function occurrences(cron: CronExpression, wall: number, zone: string): number[] {
  const first = firstInstantAtWall(wall, zone);
  if (!cron.hourWildcard) return [first];
  const repeat = REPEAT_SHIFTS_MS.map((shift) => first + shift).find((instant) => wallAt(instant, zone) === wall);
  return repeat === undefined ? [first] : [first, repeat];
}

/** The first instant strictly after `after` at which the cron expression matches in `zone`, or null if it never does. */
export function nextCronTime(cron: CronExpression, zone: string, after: number): number | null {
  // Whole minutes: a ping at 03:00:20 has used up the 03:00 slot.
  const fromWall = Math.floor((wallAt(after, zone) - SHIFT_BOUND_MS) / MS_PER_MINUTE) * MS_PER_MINUTE;
  let best: number | null = null;
  for (const wall of matchingWalls(cron, fromWall)) {
    // Later walls lie at least this far on in real time, so none can beat what was found.
    if (best !== null && wall > wallAt(best, zone) + SHIFT_BOUND_MS) break;
    for (const instant of occurrences(cron, wall, zone)) {
      if (instant > after && (best === null || instant < best)) best = instant;
    }
  }
  return best;
}

/** Why a cron schedule cannot be used, or null when it can. `now` only serves to prove it ever matches. */
export function cronProblem(expression: string, zone: string, now: number): string | null {
  let cron: CronExpression;
  try {
    cron = parseCron(expression);
  } catch (error) {
    return (error as Error).message;
  }
  return nextCronTime(cron, zone, now) === null ? "never matches a real date" : null;
}
