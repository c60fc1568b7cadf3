import {wallAt} from "../escalation/zoned-time.js";
import type {FinalShift} from "./on-call.js";

const WEEKDAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MS_PER_DAY = 86_400_000;

/** Names one shift for its hand-off notice: a notice goes out once per shift, across restarts. */
export function shiftKey(shift: Pick<FinalShift, "start" | "target">): string {
  return `${new Date(shift.start).toISOString()} ${shift.target}`;
}

/**
 * What the person coming on shift is told: "You are on call for Line 3 until 14:00", on the
 * schedule's wall clock; the day is named too when the shift ends on a later day than it starts.
 */
export function handoffText(scheduleName: string, shift: Pick<FinalShift, "start" | "end">, zone: string): string {
  const startWall = wallAt(shift.start, zone);
  const endWall = wallAt(shift.end, zone);
  const end = new Date(endWall);
  const time = `${pad(end.getUTCHours())}:${pad(end.getUTCMinutes())}`;
  const sameDay = Math.floor(startWall / MS_PER_DAY) === Math.floor(endWall / MS_PER_DAY);
  const day = `${WEEKDAY_NAMES[end.getUTCDay()]} ${end.getUTCDate()} ${MONTH_NAMES[end.getUTCMonth()]} `;
  return `You are on call for ${scheduleName} until ${sameDay ? "" : day}${time}`;
}

function pad(value: number): string {
  return String(value).padStart(2, "0");
}
