import {readableTime} from "./local-time.js";
/** The only reader of the system clock; everything else is handed a Clock so tests can set time exactly. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = {
  now: () => Date.now()
};

/** A clock that moves only when told to: for tests and for replaying a schedule. */
export class ManualClock implements Clock {
  constructor(private currentMs = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.currentMs;
  }

  set(ms: number): void {
    this.currentMs = ms;
  }

  advance(ms: number): void {
    this.currentMs += ms;
  }
}

// The rows, events and answers of one group commit share a millisecond: the last text is reused.
let lastMs = Number.NaN;
let lastIso = "";

export function isoTimestamp(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/**
 * A time as people read it in emails and on pages: in `timeZone` (the reader's; the box's when
 * not given), with the zone's abbreviation.
 */
export function formatTime(date: Date | null, timeZone?: string): string {
  // People read these (mails, the ack page): their wall clock with the zone named, not UTC (issue 33).
  return date ? readableTime(date.getTime(), timeZone) : "unknown";
}
