import {gaps} from "../../domain/schedules/on-call.js";
import {MS_PER_DAY} from "../../domain/schedules/schedule.js";
import {isoTimestamp} from "../../lib/clock.js";
import type {SchedulesRepository} from "../../store/config/repositories.js";

/** How far ahead gaps are warned about: two weeks, time enough to find someone. */
export const GAP_WARNING_DAYS = 14;

/** A schedule with nobody on call at some time in the coming days. */
export interface ScheduleGapWarning {
  uuid: string;
  name: string;
  /** The first gap. */
  starts_at: string;
  ends_at: string;
  /** How many gaps there are within the warning window. */
  gaps: number;
  /** Who is paged in a gap; null: nobody. */
  fallback: string | null;
}

/** Every schedule's first gap in the next `GAP_WARNING_DAYS` days, for /readyz and self-monitoring. */
export function upcomingGaps(schedules: SchedulesRepository, nowMs: number): ScheduleGapWarning[] {
  return schedules.all().flatMap((schedule) => {
    const found = gaps(schedule, nowMs, nowMs + GAP_WARNING_DAYS * MS_PER_DAY);
    if (found.length === 0) return [];
    return [
      {
        uuid: schedule.uuid,
        name: schedule.name,
        starts_at: isoTimestamp(found[0].start),
        ends_at: isoTimestamp(found[0].end),
        gaps: found.length,
        fallback: schedule.fallback
      }
    ];
  });
}

/** The warning in words, for the self-monitoring page and the log. */
export function describeGap(warning: ScheduleGapWarning): string {
  const more = warning.gaps > 1 ? ` (and ${warning.gaps - 1} more gap(s) within ${GAP_WARNING_DAYS} days)` : "";
  const then =
    warning.fallback === null
      ? "it has no fallback, so an alert sent to it then pages nobody"
      : `its fallback ${warning.fallback} is paged then`;
  return `schedule ${warning.name} has nobody on call from ${warning.starts_at} to ${warning.ends_at}${more}; ${then}`;
}
