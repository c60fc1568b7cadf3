import {describe, it} from "vitest";
import {NEW_HEARTBEAT} from "../../src/domain/heartbeat.js";
import {expectTransition, minutely, nightly, up, type TransitionRow} from "../support/heartbeat-fixtures.js";

const newToUp = {type: "status_changed", from: "new", to: "up"} as const;

const rows: TransitionRow[] = [
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
  ],
  [
    "up: resume changes nothing",
    up("2026-01-15T10:00:00.000Z"),
    {type: "resume"},
    minutely,
    "2026-01-15T10:00:10.000Z",
    {status: "up", effects: []}
  ]
];

describe("heartbeat transitions", () => {
  it.each(rows)("%s", expectTransition);
});
