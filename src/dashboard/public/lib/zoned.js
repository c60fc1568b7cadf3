// A schedule's wall clock in the browser, read with Intl as the gateway reads it: shifts and the
// forms are in the schedule's zone, not the zone of whoever has the dashboard open.

const DAY_MS = 86_400_000;
const partFormatters = new Map();

function partsFormatter(zone) {
  if (!partFormatters.has(zone))
    partFormatters.set(
      zone,
      new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit"
      })
    );
  return partFormatters.get(zone);
}

/** "2026-03-29T06:00" as the wall clock of `zone` reads it at the instant `ms`. */
export function wallClock(ms, zone) {
  const part = Object.fromEntries(
    partsFormatter(zone)
      .formatToParts(ms)
      .map(({type, value}) => [type, value])
  );
  return `${part.year}-${part.month}-${part.day}T${part.hour}:${part.minute}`;
}

function offsetAt(ms, zone) {
  const part = Object.fromEntries(
    partsFormatter(zone)
      .formatToParts(ms)
      .map(({type, value}) => [type, value])
  );
  const asUtc = Date.UTC(part.year, part.month - 1, part.day, part.hour, part.minute, part.second);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * The first instant `zone`'s wall clock reads `local` ("2026-03-29T06:00"), as the gateway reads
 * shift starts (src/domain/escalation/zoned-time.ts): in a repeated hour the first occurrence; in
 * the hour a spring-forward skips, the moment of the jump (02:30 on that night is 03:00).
 */
export function instantOf(local, zone) {
  const wall = local.slice(0, 16);
  const [date, time = "00:00"] = wall.split("T");
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const asUtc = Date.UTC(year, month - 1, day, hour, minute);
  const before = asUtc - offsetAt(asUtc - DAY_MS, zone);
  const after = asUtc - offsetAt(asUtc + DAY_MS, zone);
  const readings = [before, after].filter((ms) => wallClock(ms, zone) === wall);
  if (readings.length) return Math.min(...readings);
  // Skipped: the clock reads earlier at the lower bound and later at the upper; find the jump (whole minutes).
  let low = Math.min(before, after);
  let high = Math.max(before, after);
  while (high - low > 60_000) {
    const middle = low + Math.floor((high - low) / 120_000) * 60_000;
    if (wallClock(middle, zone) >= wall) high = middle;
    else low = middle;
  }
  return high;
}

/** Whether the browser knows the IANA zone (the gateway refuses the rest). */
export function knownZone(zone) {
  try {
    partsFormatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The local days of `zone` from the one holding `nowMs`, each with the instants it starts and ends. */
export function zonedDays(nowMs, zone, count) {
  const [year, month, day] = wallClock(nowMs, zone).slice(0, 10).split("-").map(Number);
  const dateOf = (offset) => new Date(Date.UTC(year, month - 1, day + offset)).toISOString().slice(0, 10);
  return Array.from({length: count}, (_, index) => ({
    date: dateOf(index),
    starts: instantOf(`${dateOf(index)}T00:00`, zone),
    ends: instantOf(`${dateOf(index + 1)}T00:00`, zone)
  }));
}

const displayFormatters = new Map();
function displayFormatter(zone, options) {
  const key = `${zone} ${JSON.stringify(options)}`;
  if (!displayFormatters.has(key))
    displayFormatters.set(key, new Intl.DateTimeFormat(undefined, {timeZone: zone, hourCycle: "h23", ...options}));
  return displayFormatters.get(key);
}

/** "Thu 26 Nov, 06:00" on the zone's wall clock. */
export function zonedWhen(iso, zone) {
  return displayFormatter(zone, {
    weekday: "short",
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit"
  }).format(new Date(iso));
}

/** "06:00" on the zone's wall clock. */
export function zonedTime(ms, zone) {
  return displayFormatter(zone, {hour: "2-digit", minute: "2-digit"}).format(ms);
}

/** "Thu 26 Nov" for a local date ("2026-11-26"), whatever the zone (a date has none). */
export function dayName(date) {
  return displayFormatter("UTC", {weekday: "short", day: "numeric", month: "short"}).format(new Date(`${date}T12:00Z`));
}

/** A <time> for an instant, written on the zone's wall clock, the exact instant kept for machines. */
export function zonedTimeElement(h, iso, zone) {
  return h("time", {datetime: iso}, zonedWhen(iso, zone));
}
