/**
 * Wall-clock arithmetic in an IANA time zone with nothing but Intl. A "wall" value is a local
 * date and time written as if it were UTC (Date.UTC of its fields), which keeps the arithmetic
 * on plain numbers; an "instant" is real milliseconds since the epoch.
 */

const MS_PER_DAY = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

// Building a DateTimeFormat is far slower than using one, and the planner asks the same zone often.
function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    });
    formatters.set(zone, format);
  }
  return format;
}

/**
 * Zone names whose wall clock is UTC's at every instant: no Intl needed (building a formatter reads
 * about 5 MB of ICU data into memory, docs/benchmarks.md "Idle footprint"; a box on UTC needs none).
 */
const UTC_NAMES = new Set(["UTC", "Etc/UTC"]);

/** The wall clock of `zone` at `instant`. Throws RangeError for a zone Intl does not know. */
export function wallAt(instant: number, zone: string): number {
  if (UTC_NAMES.has(zone)) return instant;
  const fields: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(instant)) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  const wholeSeconds = Date.UTC(
    fields.year ?? 0,
    (fields.month ?? 1) - 1,
    fields.day ?? 1,
    fields.hour ?? 0,
    fields.minute ?? 0,
    fields.second ?? 0
  );
  // Intl reports whole seconds; the milliseconds carry over unchanged because no zone offset has any.
  return wholeSeconds + (((instant % 1000) + 1000) % 1000);
}

/** Midnight (as a wall value) of the local date `instant` falls on in `zone`. */
export function localMidnight(instant: number, zone: string): number {
  const wall = wallAt(instant, zone);
  return wall - (((wall % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY);
}

/**
 * The first instant at which the wall clock of `zone` reads `wall` or later. A time that occurs
 * twice (the repeated hour when clocks fall back) gives its first occurrence; a time that never
 * occurs (the hour skipped when clocks spring forward) gives the moment of the jump, because
 * that is when a clock on the wall first shows a time at or after it.
 */
export function firstInstantAtWall(wall: number, zone: string): number {
  // The true offset is one of those in force within a day of the naive guess.
  const offsets = [
    ...new Set([wall - MS_PER_DAY, wall, wall + MS_PER_DAY].map((guess) => wallAt(guess, zone) - guess))
  ];
  const exact = offsets.map((offset) => wall - offset).filter((instant) => wallAt(instant, zone) === wall);
  if (exact.length > 0) return Math.min(...exact);
  // In a gap: the jump lies after wall - largest offset and at or before wall - smallest offset,
  // and within that window the wall clock only moves forward, so a binary search finds it.
  let low = Math.floor((wall - Math.max(...offsets)) / 1000);
  let high = Math.ceil((wall - Math.min(...offsets)) / 1000);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (wallAt(middle * 1000, zone) >= wall) high = middle;
    else low = middle;
  }
  return high * 1000;
}
