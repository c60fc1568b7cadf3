/** One formatter per zone ("" for the box's own): building a DateTimeFormat is far slower than using one, and a storm mail lists many times. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant as people at the plant read it: "28 Nov 2026, 07:30:33 CET", in `timeZone` (an IANA
 * zone; the box's own when not given), with the zone's abbreviation so nobody takes it for UTC.
 * Messages and pages use this; ISO 8601 stays in machine fields.
 */
export function readableTime(ms: number, timeZone?: string): string {
  let format = formatters.get(timeZone ?? "");
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      day: "numeric",
      month: "short",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short"
    });
    formatters.set(timeZone ?? "", format);
  }
  return format.format(ms);
}
