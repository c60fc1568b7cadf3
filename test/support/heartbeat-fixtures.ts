import {expect} from "vitest";
import {
  alertAfter,
  NEW_HEARTBEAT,
  transition,
  type HeartbeatEffect,
  type HeartbeatEvent,
  type HeartbeatState,
  type HeartbeatTiming
} from "../../src/domain/heartbeat.js";

export const T = (iso: string) => Date.parse(iso);
export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

// Every minute, one minute of grace.
export const minutely: HeartbeatTiming = {schedule: {kind: "period", period_seconds: 60}, grace_seconds: 60};
// Daily at 03:00 in Berlin, ten minutes of grace.
export const nightly: HeartbeatTiming = {
  schedule: {kind: "cron", schedule: "0 3 * * *", timezone: "Europe/Berlin"},
  grace_seconds: 600
};

/** A heartbeat made up by its first ping at `pingIso`. */
export const up = (pingIso: string, timing = minutely): HeartbeatState =>
  transition(NEW_HEARTBEAT, {type: "ping"}, timing, T(pingIso)).state;

interface Expected {
  status: HeartbeatState["status"];
  expected_at?: string | null;
  down_at?: string | null;
  alert_after?: string | null;
  effects: HeartbeatEffect[];
}

/** One row of a transition table: name, state before, event, timing, time of the event, what must follow. */
export type TransitionRow = [string, HeartbeatState, HeartbeatEvent, HeartbeatTiming, string, Expected];

/** Checks one table row; the times a row leaves out are not checked. */
export function expectTransition(...[, state, event, timing, nowIso, expected]: TransitionRow): void {
  const result = transition(state, event, timing, T(nowIso));
  expect(result.state.status).toBe(expected.status);
  expect(result.effects).toEqual(expected.effects);
  if (expected.expected_at !== undefined) expect(iso(result.state.expected_at)).toBe(expected.expected_at);
  if (expected.down_at !== undefined) expect(iso(result.state.down_at)).toBe(expected.down_at);
  if (expected.alert_after !== undefined) expect(iso(alertAfter(result.state))).toBe(expected.alert_after);
}
