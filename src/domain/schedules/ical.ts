/**
 * Shifts as an iCalendar (RFC 5545) feed, for phone and desktop calendars to subscribe to.
 * Times are written in UTC (`Z`): every calendar shows them in its own zone, and no VTIMEZONE
 * has to be kept in step with the zone database.
 */

/** One shift as a calendar event. `uid` stays the same for the same shift on every fetch. */
export interface CalendarEvent {
  uid: string;
  start: number;
  end: number;
  summary: string;
  description: string;
}

const LINE_OCTETS = 75;

/** 20260328T210000Z */
function utcStamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

// RFC 5545 3.3.11: backslash, semicolon and comma are escaped, line breaks become \n.
function escapeText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r?\n/g, "\\n");
}

function utf8Octets(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  return codePoint < 0x10000 ? 3 : 4;
}

/** RFC 5545 3.1: lines longer than 75 octets are folded (CRLF and a space), never inside a character. */
function fold(line: string): string {
  const pieces: string[] = [];
  let current = "";
  let octets = 0;
  for (const character of line) {
    const size = utf8Octets(character.codePointAt(0) as number);
    // A continuation line starts with the folding space, which counts towards its 75.
    if (octets + size > LINE_OCTETS) {
      pieces.push(current);
      current = " ";
      octets = 1;
    }
    current += character;
    octets += size;
  }
  pieces.push(current);
  return pieces.join("\r\n");
}

/** The calendar named `name` holding `events`, stamped `stamp` (when it was generated). */
export function renderCalendar(name: string, events: CalendarEvent[], stamp: number): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Klaxon//On-call schedules//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    `X-WR-CALNAME:${escapeText(name)}`,
    ...events.flatMap((event) => [
      "BEGIN:VEVENT",
      `UID:${escapeText(event.uid)}`,
      `DTSTAMP:${utcStamp(stamp)}`,
      `DTSTART:${utcStamp(event.start)}`,
      `DTEND:${utcStamp(event.end)}`,
      `SUMMARY:${escapeText(event.summary)}`,
      `DESCRIPTION:${escapeText(event.description)}`,
      "TRANSP:OPAQUE",
      "END:VEVENT"
    ]),
    "END:VCALENDAR"
  ];
  return lines.map(fold).join("\r\n") + "\r\n";
}
