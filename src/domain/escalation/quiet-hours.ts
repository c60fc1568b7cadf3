import type {QuietHours} from "../recipient.js";
import {firstInstantAtWall, localMidnight} from "./zoned-time.js";

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

function minutesOf(time: string): number | null {
  const match = HH_MM.exec(time);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/**
 * The end of the quiet period that contains `instant`, or null when `instant` is not quiet.
 *
 * Quiet periods are real intervals, one per local date: from the first moment the recipient's
 * wall clock reads `start` to the first moment it then reads `end` (the next day when start is
 * later than end, so 22:00-07:00 crosses midnight). Start is included, end is not. Reading
 * "first moment the clock reads HH:MM or later" settles daylight-saving changes:
 * - a start or end inside the skipped hour happens at the jump (22:00-02:30 on the night Berlin
 *   springs forward ends at 03:00 CEST);
 * - a start or end inside the repeated hour happens at its first occurrence, and a period that
 *   has ended does not come back when the clock shows that hour again.
 *
 * Periods that touch (only possible when a DST jump swallows the gap between them) are merged,
 * so the returned end is never itself quiet: a step held until then can run when it wakes.
 * A malformed time or unknown zone yields null: when in doubt, page (the API validates both).
 */
export function quietHoursEnd(quiet: QuietHours, instant: number): number | null {
  let end = periodEndContaining(quiet, instant);
  if (end === null) return null;
  for (let next = periodEndContaining(quiet, end); next !== null; next = periodEndContaining(quiet, end)) end = next;
  return end;
}

function periodEndContaining(quiet: QuietHours, instant: number): number | null {
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === null || end === null || start === end) return null;
  const endDayOffset = start > end ? 1 : 0;
  let today: number;
  try {
    today = localMidnight(instant, quiet.timezone);
  } catch {
    return null;
  }
  // A crossing period that contains the instant began yesterday; when clocks fall back over
  // midnight the local date can even lag the period's, hence tomorrow too.
  for (const day of [-1, 0, 1]) {
    const midnight = today + day * MS_PER_DAY;
    const from = firstInstantAtWall(midnight + start * MS_PER_MINUTE, quiet.timezone);
    const until = firstInstantAtWall(midnight + endDayOffset * MS_PER_DAY + end * MS_PER_MINUTE, quiet.timezone);
    if (from <= instant && instant < until) return until;
  }
  return null;
}
