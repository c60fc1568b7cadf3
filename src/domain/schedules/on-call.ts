import {patternSegments, rotationSegments, type Segment, type ShiftOrigin} from "./layer-shifts.js";
import type {ScheduleRules} from "./schedule.js";

export type {ShiftOrigin} from "./layer-shifts.js";

/** Who is on call from `start` (included) to `end` (excluded), and why. Instants in ms. */
export interface FinalShift {
  start: number;
  end: number;
  /** A recipient uuid, or a group uuid for a crew that is a group. */
  target: string;
  origin: ShiftOrigin;
}

export interface Gap {
  start: number;
  end: number;
}

/** Each layer's segments and the overrides', the top (the overrides) first. */
function paintersTopFirst(rules: ScheduleRules, from: number, to: number): Segment[][] {
  const layers = rules.layers.map((layer, index) =>
    layer.type === "rotation"
      ? rotationSegments(layer, index, rules.timezone, {from, to})
      : patternSegments(layer, index, rules.timezone, {from, to})
  );
  const overrides = rules.overrides
    .map((override): Segment => {
      const [start, end] = [Date.parse(override.starts_at), Date.parse(override.ends_at)];
      return {
        start,
        end,
        target: override.recipient_uuid,
        origin: {kind: "override", override_id: override.id},
        span: {start, end}
      };
    })
    .filter((segment) => segment.start < to && from < segment.end)
    .sort((a, b) => a.start - b.start);
  return [overrides, ...layers.reverse()];
}

/**
 * The segment on top at each instant of [from, to), as the list of maximal stretches each
 * segment is on top for. Painters hold sorted segments that do not overlap within one painter
 * (overrides are refused when they overlap), so one pointer per painter walks the boundaries.
 */
function topSegments(painters: Segment[][], from: number, to: number): {start: number; end: number; top: Segment}[] {
  const boundaries = new Set([from, to]);
  for (const segment of painters.flat()) {
    if (segment.start > from && segment.start < to) boundaries.add(segment.start);
    if (segment.end > from && segment.end < to) boundaries.add(segment.end);
  }
  const cuts = [...boundaries].sort((a, b) => a - b);
  const pointers = painters.map(() => 0);
  const stretches: {start: number; end: number; top: Segment}[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [start, end] = [cuts[i], cuts[i + 1]];
    let top: Segment | null = null;
    for (let p = 0; p < painters.length && !top; p++) {
      const segments = painters[p];
      while (pointers[p] < segments.length && segments[pointers[p]].end <= start) pointers[p]++;
      const candidate = segments[pointers[p]];
      if (candidate && candidate.start <= start) top = candidate;
    }
    if (!top) continue;
    const last = stretches.at(-1);
    if (last && last.top === top && last.end === start) last.end = end;
    else stretches.push({start, end, top});
  }
  return stretches;
}

/**
 * The final shifts in [from, to), after overrides: at each instant the override or else the
 * highest layer that has someone on call. Shifts are cut to the range.
 */
export function finalShifts(rules: ScheduleRules, from: number, to: number): FinalShift[] {
  if (to <= from) return [];
  return topSegments(paintersTopFirst(rules, from, to), from, to).map(({start, end, top}) => ({
    start,
    end,
    target: top.target,
    origin: top.origin
  }));
}

/**
 * The final shift holding `instant`, whole (not cut to any range), or null when nobody is on
 * call then. The shift on top at the instant is found first; only shifts within its span can
 * cut it, so the final shifts over that span hold it whole.
 */
export function onCallAt(rules: ScheduleRules, instant: number): FinalShift | null {
  const top = paintersTopFirst(rules, instant, instant + 1)
    .map((segments) => segments.find((segment) => segment.start <= instant && instant < segment.end))
    .find((segment) => segment !== undefined);
  if (!top) return null;
  return (
    finalShifts(rules, top.span.start, top.span.end).find((shift) => shift.start <= instant && instant < shift.end) ??
    null
  );
}

/**
 * The final shifts overlapping [from, to), the first and the last whole rather than cut at the
 * range's ends: an event made from them (an iCal UID, its DTSTART) then does not depend on the
 * window it was read through.
 */
export function wholeShiftsOverlapping(rules: ScheduleRules, from: number, to: number): FinalShift[] {
  const shifts = finalShifts(rules, from, to);
  if (shifts.length === 0) return shifts;
  const last = shifts.length - 1;
  if (shifts[0].start === from) shifts[0] = onCallAt(rules, from) ?? shifts[0];
  if (shifts[last].end === to) {
    const whole = onCallAt(rules, to - 1);
    // A single shift covering the range was made whole from its start already: same shift, same start.
    if (whole && whole.start <= shifts[last].start) shifts[last] = whole;
  }
  return shifts;
}

/** The stretches of [from, to) when nobody is on call. */
export function gaps(rules: ScheduleRules, from: number, to: number): Gap[] {
  const found: Gap[] = [];
  let covered = from;
  for (const shift of finalShifts(rules, from, to)) {
    if (shift.start > covered) found.push({start: covered, end: shift.start});
    covered = shift.end;
  }
  if (covered < to) found.push({start: covered, end: to});
  return found;
}
