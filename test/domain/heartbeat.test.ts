import {describe, expect, it} from "vitest";
import {
  alertAfter,
  NEW_HEARTBEAT,
  transition,
  type HeartbeatEffect,
  type HeartbeatEvent,
  type HeartbeatState,
  type HeartbeatTiming
} from "../../src/domain/heartbeat.js";

const T = (iso: string) => Date.parse(iso);
// Every minute, one minute of grace.
const minutely: HeartbeatTiming = {schedule: {kind: "period", period_seconds: 60}, grace_seconds: 60};
// Daily at 03:00 in Berlin, ten minutes of grace.
const nightly: HeartbeatTiming = {
  schedule: {kind: "cron", schedule: "0 3 * * *", timezone: "Europe/Berlin"},
  grace_seconds: 600
};

const up = (pingIso: string, timing = minutely): HeartbeatState =>
  transition(NEW_HEARTBEAT, {type: "ping"}, timing, T(pingIso)).state;

interface Expected {
  status: HeartbeatState["status"];
  expected_at?: string | null;
  down_at?: string | null;
  alert_after?: string | null;
  effects: HeartbeatEffect[];
}

type Row = [string, HeartbeatState, HeartbeatEvent, HeartbeatTiming, string, Expected];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const newToUp = {type: "status_changed", from: "new", to: "up"} as const;

const rows: Row[] = [
  // From new
  [
    "new: the first ping makes it up and sets the due time",
    NEW_HEARTBEAT,
    {type: "ping"},
    minutely,
    "2026-01-15T10:00:00.000Z",
    {
      status: "up",
      expected_at: "2026-01-15T10:01:00.000Z",
      down_at: "2026-01-15T10:02:00.000Z",
      alert_after: "2026-01-15T10:01:00.000Z",
      effects: [newToUp]
    }
  ],
  [
    "new: the sweep finds nothing to do",
    NEW_HEARTBEAT,
    {type: "due"},
    minutely,
    "2027-01-01T00:00:00.000Z",
    {status: "new", alert_after: null, effects: []}
  ],
  [
    "new: a start must end within the grace",
    NEW_HEARTBEAT,
    {type: "start"},
    minutely,
    "2026-01-15T10:00:00.000Z",
    {status: "new", down_at: "2026-01-15T10:01:00.000Z", alert_after: "2026-01-15T10:01:00.000Z", effects: []}
  ],
  [
    "new: a failure pages at once",
    NEW_HEARTBEAT,
    {type: "fail"},
    minutely,
    "2026-01-15T10:00:00.000Z",
    {
      status: "down",
      alert_after: null,
      effects: [
        {type: "status_changed", from: "new", to: "down"},
        {type: "page", reason: "failed"}
      ]
    }
  ],
  // From up
  [
    "up: a ping moves the due time on",
    up("2026-01-15T10:00:00.000Z"),
    {type: "ping"},
    minutely,
    "2026-01-15T10:00:30.000Z",
    {status: "up", expected_at: "2026-01-15T10:01:30.000Z", down_at: "2026-01-15T10:02:30.000Z", effects: []}
  ],
  [
    "up: the sweep before the due time changes nothing",
    up("2026-01-15T10:00:00.000Z"),
    {type: "due"},
    minutely,
    "2026-01-15T10:00:59.999Z",
    {status: "up", effects: []}
  ],
  [
    "up: at the due time it turns late",
    up("2026-01-15T10:00:00.000Z"),
    {type: "due"},
    minutely,
    "2026-01-15T10:01:00.000Z",
    {
      status: "late",
      alert_after: "2026-01-15T10:02:00.000Z",
      effects: [{type: "status_changed", from: "up", to: "late"}]
    }
  ],
  [
    "up: a sweep that comes after the grace too goes straight down",
    up("2026-01-15T10:00:00.000Z"),
    {type: "due"},
    minutely,
    "2026-01-15T10:05:00.000Z",
    {
      status: "down",
      alert_after: null,
      effects: [
        {type: "status_changed", from: "up", to: "down"},
        {type: "page", reason: "missed"}
      ]
    }
  ],
  [
    "up: a start brings the deadline forward to start + grace",
    up("2026-01-15T10:00:00.000Z", nightly),
    {type: "start"},
    nightly,
    "2026-01-15T12:00:00.000Z",
    {
      status: "up",
      expected_at: "2026-01-16T02:00:00.000Z",
      down_at: "2026-01-15T12:10:00.000Z",
      alert_after: "2026-01-15T12:10:00.000Z",
      effects: []
    }
  ],
  [
    "up: a failure pages at once",
    up("2026-01-15T10:00:00.000Z"),
    {type: "fail"},
    minutely,
    "2026-01-15T10:00:10.000Z",
    {
      status: "down",
      alert_after: null,
      effects: [
        {type: "status_changed", from: "up", to: "down"},
        {type: "page", reason: "failed"}
      ]
    }
  ],
  [
    "up: pause stops watching",
    up("2026-01-15T10:00:00.000Z"),
    {type: "pause"},
    minutely,
    "2026-01-15T10:00:10.000Z",
    {status: "paused", alert_after: null, effects: [{type: "status_changed", from: "up", to: "paused"}]}
  ],
  [
    "up: a longer period moves the due time from the last ping",
    up("2026-01-15T10:00:00.000Z"),
    {type: "reconfigured"},
    {schedule: {kind: "period", period_seconds: 600}, grace_seconds: 60},
    "2026-01-15T10:00:30.000Z",
    {status: "up", expected_at: "2026-01-15T10:10:00.000Z", down_at: "2026-01-15T10:11:00.000Z", effects: []}
  ],
  [
    "up: a shorter period can make it late at once",
    up("2026-01-15T10:00:00.000Z", nightly),
    {type: "reconfigured"},
    minutely,
    "2026-01-15T10:05:00.000Z",
    {
      status: "late",
      expected_at: "2026-01-15T10:01:00.000Z",
      down_at: "2026-01-15T10:02:00.000Z",
      effects: [{type: "status_changed", from: "up", to: "late"}]
    }
  ]
];

const late = transition(up("2026-01-15T10:00:00.000Z"), {type: "due"}, minutely, T("2026-01-15T10:01:00.000Z")).state;
const downMissed = transition(late, {type: "due"}, minutely, T("2026-01-15T10:02:00.000Z")).state;
const paused = transition(downMissed, {type: "pause"}, minutely, T("2026-01-15T10:03:00.000Z")).state;
const pausedNew = transition(NEW_HEARTBEAT, {type: "pause"}, minutely, T("2026-01-15T10:00:00.000Z")).state;

rows.push(
  // From late
  [
    "late: the sweep before the grace ends changes nothing",
    late,
    {type: "due"},
    minutely,
    "2026-01-15T10:01:59.999Z",
    {status: "late", effects: []}
  ],
  [
    "late: when the grace ends it goes down and pages",
    late,
    {type: "due"},
    minutely,
    "2026-01-15T10:02:00.000Z",
    {
      status: "down",
      alert_after: null,
      effects: [
        {type: "status_changed", from: "late", to: "down"},
        {type: "page", reason: "missed"}
      ]
    }
  ],
  [
    "late: a ping makes it up again without a page to resolve",
    late,
    {type: "ping"},
    minutely,
    "2026-01-15T10:01:30.000Z",
    {status: "up", expected_at: "2026-01-15T10:02:30.000Z", effects: [{type: "status_changed", from: "late", to: "up"}]}
  ],
  [
    "late: after a restart the deadline is a full grace away",
    late,
    {type: "restart"},
    minutely,
    "2026-01-15T10:01:50.000Z",
    {status: "late", down_at: "2026-01-15T10:02:50.000Z", alert_after: "2026-01-15T10:02:50.000Z", effects: []}
  ],
  // From down
  [
    "down: the sweep never pages twice",
    downMissed,
    {type: "due"},
    minutely,
    "2026-01-16T00:00:00.000Z",
    {status: "down", alert_after: null, effects: []}
  ],
  [
    "down: another failure does not page again",
    downMissed,
    {type: "fail"},
    minutely,
    "2026-01-15T10:05:00.000Z",
    {status: "down", effects: []}
  ],
  [
    "down: a good ping makes it up and resolves the page",
    downMissed,
    {type: "ping"},
    minutely,
    "2026-01-15T10:05:00.000Z",
    {
      status: "up",
      expected_at: "2026-01-15T10:06:00.000Z",
      effects: [{type: "status_changed", from: "down", to: "up"}, {type: "resolve"}]
    }
  ],
  [
    "down: a start is recorded but sets no deadline",
    downMissed,
    {type: "start"},
    minutely,
    "2026-01-15T10:05:00.000Z",
    {status: "down", alert_after: null, effects: []}
  ],
  [
    "down: a restart changes nothing",
    downMissed,
    {type: "restart"},
    minutely,
    "2026-01-15T11:00:00.000Z",
    {status: "down", alert_after: null, effects: []}
  ],
  // From paused
  [
    "paused: the sweep finds nothing to do",
    paused,
    {type: "due"},
    minutely,
    "2026-01-16T00:00:00.000Z",
    {status: "paused", alert_after: null, effects: []}
  ],
  [
    "paused: a ping resumes it and resolves the page still open from before",
    paused,
    {type: "ping"},
    minutely,
    "2026-01-15T10:10:00.000Z",
    {
      status: "up",
      expected_at: "2026-01-15T10:11:00.000Z",
      effects: [{type: "status_changed", from: "paused", to: "up"}, {type: "resolve"}]
    }
  ],
  [
    "paused: resume watches it again from now",
    paused,
    {type: "resume"},
    minutely,
    "2026-01-15T10:10:00.000Z",
    {
      status: "up",
      expected_at: "2026-01-15T10:11:00.000Z",
      down_at: "2026-01-15T10:12:00.000Z",
      effects: [{type: "status_changed", from: "paused", to: "up"}]
    }
  ],
  [
    "paused: resume of a heartbeat that never pinged makes it new",
    pausedNew,
    {type: "resume"},
    minutely,
    "2026-01-15T10:10:00.000Z",
    {status: "new", alert_after: null, effects: [{type: "status_changed", from: "paused", to: "new"}]}
  ],
  [
    "paused: a start is only recorded",
    pausedNew,
    {type: "start"},
    minutely,
    "2026-01-15T10:10:00.000Z",
    {status: "paused", alert_after: null, effects: []}
  ],
  [
    "paused: a failure pages",
    pausedNew,
    {type: "fail"},
    minutely,
    "2026-01-15T10:10:00.000Z",
    {
      status: "down",
      effects: [
        {type: "status_changed", from: "paused", to: "down"},
        {type: "page", reason: "failed"}
      ]
    }
  ],
  [
    "up: resume changes nothing",
    up("2026-01-15T10:00:00.000Z"),
    {type: "resume"},
    minutely,
    "2026-01-15T10:00:10.000Z",
    {status: "up", effects: []}
  ]
);

describe("heartbeat transitions", () => {
  it.each(rows)("%s", (_name, state, event, timing, nowIso, expected) => {
    const result = transition(state, event, timing, T(nowIso));
    expect(result.state.status).toBe(expected.status);
    expect(result.effects).toEqual(expected.effects);
    if (expected.expected_at !== undefined) expect(iso(result.state.expected_at)).toBe(expected.expected_at);
    if (expected.down_at !== undefined) expect(iso(result.state.down_at)).toBe(expected.down_at);
    if (expected.alert_after !== undefined) expect(iso(alertAfter(result.state))).toBe(expected.alert_after);
  });

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
