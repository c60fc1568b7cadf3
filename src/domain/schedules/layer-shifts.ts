import {firstInstantAtWall, localMidnight, wallAt} from "../escalation/zoned-time.js";
import {
  minutesOf,
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  shiftLengthHours,
  wallOfDate,
  WEEKDAYS,
  type LayerRestrictions,
  type RotationLayer,
  type ShiftPatternLayer
} from "./schedule.js";

/** Why a shift puts its target on call. */
export type ShiftOrigin =
  | {kind: "rotation"; layer: number; layer_name: string | null; turn: number}
  | {kind: "shift_pattern"; layer: number; layer_name: string | null; shift: string; crew: string}
  | {kind: "override"; override_id: string};

/**
 * A stretch of time one target is on call for, as one layer (or the overrides) sees it. `span`
 * is the whole shift it was cut from (a restriction can cut a rotation shift into pieces).
 */
export interface Segment {
  start: number;
  end: number;
  target: string;
  origin: ShiftOrigin;
  span: {start: number; end: number};
}

interface Interval {
  start: number;
  end: number;
}

/** The restriction's windows that reach into [from, to), merged where they touch or overlap. */
function restrictionIntervals(restrictions: LayerRestrictions, zone: string, from: number, to: number): Interval[] {
  const windows = restrictions.windows ?? [{start: "00:00", end: "24:00"}];
  const intervals: Interval[] = [];
  // A window crossing midnight that reaches `from` began the day before.
  for (let day = localMidnight(from, zone) - MS_PER_DAY; firstInstantAtWall(day, zone) < to; day += MS_PER_DAY) {
    const weekday = WEEKDAYS[new Date(day).getUTCDay()];
    if (restrictions.weekdays && !restrictions.weekdays.includes(weekday)) continue;
    for (const window of windows) {
      const [start, end] = [minutesOf(window.start), minutesOf(window.end)];
      const endDay = end <= start ? MS_PER_DAY : 0;
      intervals.push({
        start: firstInstantAtWall(day + start * MS_PER_MINUTE, zone),
        end: firstInstantAtWall(day + endDay + end * MS_PER_MINUTE, zone)
      });
    }
  }
  intervals.sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const interval of intervals) {
    const last = merged.at(-1);
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else if (interval.end > interval.start) merged.push({...interval});
  }
  return merged;
}

/** The instants [from, to) a layer's shifts are wanted for, in ms since the epoch. */
export interface Span {
  from: number;
  to: number;
}

/**
 * The rotation's shifts that reach into [from, to), whole, cut to its restrictions. Hand-off k
 * is the first instant the wall clock reads `starts_at`'s wall time plus k shift lengths, so a
 * shift holding a daylight-saving change is that much shorter or longer, and one that falls
 * entirely in a skipped hour is empty and left out.
 */
export function rotationSegments(layer: RotationLayer, index: number, zone: string, {from, to}: Span): Segment[] {
  const origin = Date.parse(layer.starts_at);
  if (to <= origin) return [];
  const length = shiftLengthHours(layer) * MS_PER_HOUR;
  const originWall = wallAt(origin, zone);
  const handoff = (turn: number) => (turn === 0 ? origin : firstInstantAtWall(originWall + turn * length, zone));
  // The wall clock can read up to an hour behind when clocks fall back; a turn earlier covers it.
  const firstTurn = Math.max(0, Math.floor((wallAt(Math.max(from, origin), zone) - originWall) / length) - 1);
  const shifts: Segment[] = [];
  for (let turn = firstTurn; handoff(turn) < to; turn++) {
    const [start, end] = [handoff(turn), handoff(turn + 1)];
    if (end <= from || end <= start) continue;
    shifts.push({
      start,
      end,
      target: layer.members[turn % layer.members.length],
      origin: {kind: "rotation", layer: index, layer_name: layer.name ?? null, turn},
      span: {start, end}
    });
  }
  if (!layer.restrictions || shifts.length === 0) return shifts;
  const allowed = restrictionIntervals(layer.restrictions, zone, shifts[0].start, shifts[shifts.length - 1].end);
  return shifts.flatMap((shift) =>
    allowed
      .filter((interval) => interval.start < shift.end && shift.start < interval.end)
      .map((interval) => ({
        ...shift,
        start: Math.max(shift.start, interval.start),
        end: Math.min(shift.end, interval.end)
      }))
  );
}

/**
 * The pattern's shifts that reach into [from, to), from `starts_on` on. Shift s of a day runs
 * from the first instant the wall clock reads its start to the first instant it reads the next
 * shift's start (the first shift of the next day for the last one), so Berlin's 22:00-06:00
 * night lasts 7 hours when clocks spring forward and 9 when they fall back.
 */
export function patternSegments(layer: ShiftPatternLayer, index: number, zone: string, {from, to}: Span): Segment[] {
  const firstDay = wallOfDate(layer.starts_on) as number;
  const offsets = layer.shifts.map((shift) => minutesOf(shift.starts) * MS_PER_MINUTE);
  const ends = offsets.map((_, s) => (s + 1 < offsets.length ? offsets[s + 1] : MS_PER_DAY + offsets[0]));
  const targets = new Map(layer.crews.map((crew) => [crew.name, crew.target]));
  const segments: Segment[] = [];
  // The last shift of the day before `from` may still run at `from`.
  let day = Math.max(0, Math.floor((localMidnight(from, zone) - firstDay) / MS_PER_DAY) - 1);
  for (; firstInstantAtWall(firstDay + day * MS_PER_DAY + offsets[0], zone) < to; day++) {
    const midnight = firstDay + day * MS_PER_DAY;
    const crews = layer.cycle[day % layer.cycle.length];
    layer.shifts.forEach((shift, s) => {
      const crew = crews[s];
      if (crew === null) return;
      const start = firstInstantAtWall(midnight + offsets[s], zone);
      const end = firstInstantAtWall(midnight + ends[s], zone);
      if (end <= from || start >= to || end <= start) return;
      segments.push({
        start,
        end,
        target: targets.get(crew) as string,
        origin: {kind: "shift_pattern", layer: index, layer_name: layer.name ?? null, shift: shift.name, crew},
        span: {start, end}
      });
    });
  }
  return segments;
}
