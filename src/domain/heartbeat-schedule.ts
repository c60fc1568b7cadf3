import {nextCronTime, parseCron} from "./cron.js";

/**
 * When a heartbeat's next ping is expected: a fixed period after the last one, or the next time
 * a cron expression (domain/cron.ts) matches in a time zone. Pure; instants are ms since the epoch.
 */
export type HeartbeatSchedule =
  {kind: "period"; period_seconds: number} | {kind: "cron"; schedule: string; timezone: string};

/** When the next ping is expected after one at `after`; null only for a cron expression that never matches. */
export function nextExpectedAt(schedule: HeartbeatSchedule, after: number): number | null {
  if (schedule.kind === "period") return after + schedule.period_seconds * 1000;
  return nextCronTime(parseCron(schedule.schedule), schedule.timezone, after);
}
