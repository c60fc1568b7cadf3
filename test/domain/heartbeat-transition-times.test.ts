import {describe, expect, it} from "vitest";
import {alertAfter, transition, type HeartbeatTiming} from "../../src/domain/heartbeat.js";
import {iso, minutely, nightly, T, up} from "../support/heartbeat-fixtures.js";

describe("heartbeat transitions", () => {
  it("records the ping and a started run's start", () => {
    const started = transition(
      up("2026-01-15T10:00:00.000Z"),
      {type: "start"},
      minutely,
      T("2026-01-15T10:00:20.000Z")
    ).state;
    expect(started.last_start_at).toBe(T("2026-01-15T10:00:20.000Z"));
    const finished = transition(started, {type: "ping"}, minutely, T("2026-01-15T10:00:40.000Z")).state;
    expect(finished).toMatchObject({last_ping_at: T("2026-01-15T10:00:40.000Z"), last_start_at: null, paged: false});
    expect(transition(finished, {type: "fail"}, minutely, T("2026-01-15T10:00:50.000Z")).state).toMatchObject({
      last_ping_at: T("2026-01-15T10:00:50.000Z"),
      paged: true
    });
  });

  it("turns late then down at exact times across a night when Berlin falls back", () => {
    // Pinged at 03:00 CEST on 24 October; due at 03:00 CET on the 25th, 25 hours later.
    let state = up("2026-10-24T01:00:00.000Z", nightly);
    expect(iso(state.expected_at)).toBe("2026-10-25T02:00:00.000Z");
    const sweeps: Array<[string, string]> = [
      ["2026-10-25T01:59:59.000Z", "up"],
      ["2026-10-25T02:00:00.000Z", "late"],
      ["2026-10-25T02:09:59.000Z", "late"],
      ["2026-10-25T02:10:00.000Z", "down"]
    ];
    for (const [at, status] of sweeps) {
      state = transition(state, {type: "due"}, nightly, T(at)).state;
      expect(state.status, at).toBe(status);
    }
  });

  it("expects a spring-forward night's 02:30 job at the jump and pages ten minutes later", () => {
    const timing: HeartbeatTiming = {
      schedule: {kind: "cron", schedule: "30 2 * * *", timezone: "Europe/Berlin"},
      grace_seconds: 600
    };
    const state = up("2026-03-28T01:30:00.000Z", timing);
    expect(iso(state.expected_at)).toBe("2026-03-29T01:00:00.000Z");
    expect(iso(alertAfter(state))).toBe("2026-03-29T01:00:00.000Z");
    expect(transition(state, {type: "due"}, timing, T("2026-03-29T01:10:00.000Z")).effects).toContainEqual({
      type: "page",
      reason: "missed"
    });
  });
});
