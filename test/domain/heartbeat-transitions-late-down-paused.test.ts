import {describe, it} from "vitest";
import {NEW_HEARTBEAT, transition} from "../../src/domain/heartbeat.js";
import {expectTransition, minutely, T, up, type TransitionRow} from "../support/heartbeat-fixtures.js";

const late = transition(up("2026-01-15T10:00:00.000Z"), {type: "due"}, minutely, T("2026-01-15T10:01:00.000Z")).state;
const downMissed = transition(late, {type: "due"}, minutely, T("2026-01-15T10:02:00.000Z")).state;
const paused = transition(downMissed, {type: "pause"}, minutely, T("2026-01-15T10:03:00.000Z")).state;
const pausedNew = transition(NEW_HEARTBEAT, {type: "pause"}, minutely, T("2026-01-15T10:00:00.000Z")).state;

const rows: TransitionRow[] = [
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
  ]
];

describe("heartbeat transitions", () => {
  it.each(rows)("%s", expectTransition);
});
