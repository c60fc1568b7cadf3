/**
 * On-call schedules: the rules that say who a schedule pages at any instant. Times of day and
 * dates are read on the wall clock of the schedule's IANA zone; instants are ISO 8601 texts.
 */

export const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A time-of-day window, "HH:MM" to "HH:MM" (end "24:00" allowed); an end at or before the start crosses midnight. */
export interface TimeWindow {
  start: string;
  end: string;
}

/**
 * Where a rotation layer applies: on these weekdays (all when absent), within these windows
 * (the whole day when absent). A window belongs to the weekday it starts on.
 */
export interface LayerRestrictions {
  weekdays?: Weekday[];
  windows?: TimeWindow[];
}

/**
 * Members take turns, one shift each, in order, from `starts_at` on (nobody before it). Exactly
 * one shift length is given; lengths are counted on the zone's wall clock, so a rotation that
 * hands off at 08:00 keeps handing off at 08:00 after a daylight-saving change.
 */
export interface RotationLayer {
  type: "rotation";
  name?: string;
  /** Recipient uuids, in turn order. */
  members: string[];
  shift_length_hours?: number;
  shift_length_days?: number;
  shift_length_weeks?: number;
  starts_at: string;
  restrictions?: LayerRestrictions;
}

/** A shift of the day, named, starting at "HH:MM"; it runs until the next shift of the day starts. */
export interface ShiftOfDay {
  name: string;
  starts: string;
}

/** A crew of a shift pattern: a recipient or group, under the name the cycle uses. */
export interface Crew {
  name: string;
  target: string;
}

/**
 * What plants run: named shifts every day, and a cycle of days saying which crew works each
 * shift. `cycle[d][s]` is the crew (by name, or null for nobody) on shift `s` of day `d` of the
 * cycle; day 0 is `starts_on`, and the cycle repeats. The last shift of a day runs until the
 * first shift of the next day starts (22:00 nights end at 06:00).
 */
export interface ShiftPatternLayer {
  type: "shift_pattern";
  name?: string;
  shifts: ShiftOfDay[];
  crews: Crew[];
  cycle: (string | null)[][];
  /** Local date, YYYY-MM-DD. */
  starts_on: string;
}

export type ScheduleLayer = RotationLayer | ShiftPatternLayer;

/** Someone else on call for a while: wins over every layer. */
export interface ScheduleOverride {
  id: string;
  recipient_uuid: string;
  starts_at: string;
  ends_at: string;
  created_at?: string;
}

/** What evaluation needs of a schedule. Layers later in the list sit on top of earlier ones. */
export interface ScheduleRules {
  timezone: string;
  layers: ScheduleLayer[];
  overrides: ScheduleOverride[];
}

/** A schedule as stored in the config store. */
export interface Schedule extends ScheduleRules {
  uuid: string;
  name: string;
  /** The recipient or group paged when nobody is on call; the service refuses a schedule without one. */
  fallback: string | null;
  /** Tell whoever comes on shift that they are on call, and until when (absent in schedules made before it: false). */
  handoff_notice?: boolean;
  /** The unguessable part of the schedule's key-less iCal feed URL. */
  ical_token: string;
  created_at: string;
  updated_at: string;
}

export const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Minutes after midnight of an "HH:MM" text (24:00 is 1440); callers validate first. */
export function minutesOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/** The wall value of midnight starting a YYYY-MM-DD date, or null when it is no date. */
export function wallOfDate(date: string): number | null {
  const match = ISO_DATE.exec(date);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const wall = Date.UTC(year, month - 1, day);
  const back = new Date(wall);
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === day ? wall : null;
}

/** A rotation's shift length in wall-clock hours. */
export function shiftLengthHours(layer: RotationLayer): number {
  return layer.shift_length_hours ?? (layer.shift_length_days ?? 0) * 24 + (layer.shift_length_weeks ?? 0) * 168;
}

/** The override already in the schedule that shares time with `candidate`, if any (touching is fine). */
export function overlappingOverride(
  overrides: readonly ScheduleOverride[],
  candidate: {starts_at: string; ends_at: string}
): ScheduleOverride | null {
  const [start, end] = [Date.parse(candidate.starts_at), Date.parse(candidate.ends_at)];
  return (
    overrides.find((override) => Date.parse(override.starts_at) < end && start < Date.parse(override.ends_at)) ?? null
  );
}
