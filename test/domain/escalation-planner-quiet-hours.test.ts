import {describe, it} from "vitest";
import {member, quiet, snapshot} from "../support/escalation-fixtures.js";
import {expectTimeline, timeline, type TimelineRow} from "../support/escalation-timeline.js";

describe("escalation planner", () => {
  describe("respects quiet hours", () => {
    const berlinNights = quiet("22:00", "07:00", "Europe/Berlin");
    const alice = (overrides = {}) =>
      member("alice", ["voice_call"], {repeat: 0, quiet_hours: berlinNights, ...overrides});
    const rows: TimelineRow[] = [
      [
        "holds a high-priority alert during quiet hours",
        () => timeline(snapshot("sequential", [alice()], "high"), "2026-01-15T23:00:00.000Z"),
        [
          "2026-01-15T23:00:00.000Z defer #0 alice voice_call until 2026-01-16T06:00:00.000Z",
          "2026-01-15T23:00:00.000Z wake_at 2026-01-16T06:00:00.000Z gen 1",
          "2026-01-16T06:00:00.000Z attempt #0 alice voice_call",
          "2026-01-16T06:00:00.000Z step #0",
          "2026-01-16T06:00:00.000Z wake_at 2026-01-16T06:02:00.000Z gen 2",
          "2026-01-16T06:02:00.000Z exhausted"
        ]
      ],
      [
        "pages a critical alert during quiet hours",
        () => timeline(snapshot("sequential", [alice()], "critical"), "2026-01-15T23:00:00.000Z"),
        [
          "2026-01-15T23:00:00.000Z attempt #0 alice voice_call",
          "2026-01-15T23:00:00.000Z step #0",
          "2026-01-15T23:00:00.000Z wake_at 2026-01-15T23:02:00.000Z gen 1",
          "2026-01-15T23:02:00.000Z exhausted"
        ]
      ],
      [
        "holds the next step when quiet hours begin mid-chain and resume it after midnight",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["telegram_voice", "voice_call"], {repeat: 0, quiet_hours: berlinNights})
            ]),
            "2026-01-15T20:59:00.000Z"
          ),
        [
          "2026-01-15T20:59:00.000Z attempt #0 alice telegram_voice",
          "2026-01-15T20:59:00.000Z step #0",
          "2026-01-15T20:59:00.000Z wake_at 2026-01-15T21:01:00.000Z gen 1",
          "2026-01-15T21:01:00.000Z defer #1 alice voice_call until 2026-01-16T06:00:00.000Z",
          "2026-01-15T21:01:00.000Z wake_at 2026-01-16T06:00:00.000Z gen 2",
          "2026-01-16T06:00:00.000Z attempt #1 alice voice_call",
          "2026-01-16T06:00:00.000Z step #1",
          "2026-01-16T06:00:00.000Z wake_at 2026-01-16T06:02:00.000Z gen 3",
          "2026-01-16T06:02:00.000Z exhausted"
        ]
      ],
      [
        "pages the awake members of a parallel step and records the sleeping ones as deferred",
        () =>
          timeline(
            snapshot("parallel", [
              alice({ack_timeout_seconds: 900}),
              member("bob", ["sms"], {repeat: 0, ack_timeout_seconds: 60})
            ]),
            "2026-01-15T23:00:00.000Z"
          ),
        [
          "2026-01-15T23:00:00.000Z defer #0 alice voice_call until 2026-01-16T06:00:00.000Z",
          "2026-01-15T23:00:00.000Z attempt #0 bob sms",
          "2026-01-15T23:00:00.000Z step #0",
          "2026-01-15T23:00:00.000Z wake_at 2026-01-15T23:01:00.000Z gen 1",
          "2026-01-15T23:01:00.000Z exhausted"
        ]
      ],
      [
        "holds a parallel step in which everyone sleeps until the first of them wakes",
        () =>
          timeline(
            snapshot("parallel", [
              alice(),
              member("bob", ["sms"], {repeat: 0, quiet_hours: quiet("23:00", "06:30", "Europe/London")})
            ]),
            "2026-01-15T23:00:00.000Z"
          ),
        [
          "2026-01-15T23:00:00.000Z defer #0 alice voice_call until 2026-01-16T06:00:00.000Z",
          "2026-01-15T23:00:00.000Z defer #0 bob sms until 2026-01-16T06:30:00.000Z",
          "2026-01-15T23:00:00.000Z wake_at 2026-01-16T06:00:00.000Z gen 1",
          "2026-01-16T06:00:00.000Z attempt #0 alice voice_call",
          "2026-01-16T06:00:00.000Z step #0",
          "2026-01-16T06:00:00.000Z wake_at 2026-01-16T06:02:00.000Z gen 2",
          "2026-01-16T06:02:00.000Z exhausted"
        ]
      ]
    ];
    it.each(rows)("%s", expectTimeline);
  });

  describe("across daylight-saving changes", () => {
    const rows: TimelineRow[] = [
      [
        "holds until 07:00 CEST on the night Berlin springs forward",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call"], {repeat: 0, quiet_hours: quiet("22:00", "07:00", "Europe/Berlin")})
            ]),
            "2026-03-28T23:30:00.000Z"
          ),
        [
          "2026-03-28T23:30:00.000Z defer #0 alice voice_call until 2026-03-29T05:00:00.000Z",
          "2026-03-28T23:30:00.000Z wake_at 2026-03-29T05:00:00.000Z gen 1",
          "2026-03-29T05:00:00.000Z attempt #0 alice voice_call",
          "2026-03-29T05:00:00.000Z step #0",
          "2026-03-29T05:00:00.000Z wake_at 2026-03-29T05:02:00.000Z gen 2",
          "2026-03-29T05:02:00.000Z exhausted"
        ]
      ],
      [
        "pages in Berlin's repeated hour once quiet hours ended at its first pass",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call", "sms"], {
                repeat: 0,
                ack_timeout_seconds: 2700,
                quiet_hours: quiet("22:00", "02:30", "Europe/Berlin")
              })
            ]),
            "2026-10-25T00:15:00.000Z"
          ),
        [
          "2026-10-25T00:15:00.000Z defer #0 alice voice_call until 2026-10-25T00:30:00.000Z",
          "2026-10-25T00:15:00.000Z defer #1 alice sms until 2026-10-25T00:30:00.000Z",
          "2026-10-25T00:15:00.000Z wake_at 2026-10-25T00:30:00.000Z gen 1",
          "2026-10-25T00:30:00.000Z attempt #0 alice voice_call",
          "2026-10-25T00:30:00.000Z step #0",
          "2026-10-25T00:30:00.000Z wake_at 2026-10-25T01:15:00.000Z gen 2",
          "2026-10-25T01:15:00.000Z attempt #1 alice sms",
          "2026-10-25T01:15:00.000Z step #1",
          "2026-10-25T01:15:00.000Z wake_at 2026-10-25T02:00:00.000Z gen 3",
          "2026-10-25T02:00:00.000Z exhausted"
        ]
      ],
      [
        "holds until 03:00 EDT when New York's quiet hours end in the skipped hour",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call"], {repeat: 0, quiet_hours: quiet("23:00", "02:30", "America/New_York")})
            ]),
            "2026-03-08T06:30:00.000Z"
          ),
        [
          "2026-03-08T06:30:00.000Z defer #0 alice voice_call until 2026-03-08T07:00:00.000Z",
          "2026-03-08T06:30:00.000Z wake_at 2026-03-08T07:00:00.000Z gen 1",
          "2026-03-08T07:00:00.000Z attempt #0 alice voice_call",
          "2026-03-08T07:00:00.000Z step #0",
          "2026-03-08T07:00:00.000Z wake_at 2026-03-08T07:02:00.000Z gen 2",
          "2026-03-08T07:02:00.000Z exhausted"
        ]
      ],
      [
        "holds until 07:00 EST on the night New York falls back",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call"], {repeat: 0, quiet_hours: quiet("22:00", "07:00", "America/New_York")})
            ]),
            "2026-11-01T04:30:00.000Z"
          ),
        [
          "2026-11-01T04:30:00.000Z defer #0 alice voice_call until 2026-11-01T12:00:00.000Z",
          "2026-11-01T04:30:00.000Z wake_at 2026-11-01T12:00:00.000Z gen 1",
          "2026-11-01T12:00:00.000Z attempt #0 alice voice_call",
          "2026-11-01T12:00:00.000Z step #0",
          "2026-11-01T12:00:00.000Z wake_at 2026-11-01T12:02:00.000Z gen 2",
          "2026-11-01T12:02:00.000Z exhausted"
        ]
      ]
    ];
    it.each(rows)("%s", expectTimeline);
  });
});
