import {describe, it} from "vitest";
import {member, quiet, snapshot} from "../support/escalation-fixtures.js";
import {expectTimeline, timeline, type TimelineRow} from "../support/escalation-timeline.js";

describe("escalation planner", () => {
  describe("walks the chain", () => {
    const rows: TimelineRow[] = [
      [
        "pages one recipient on two channels, twice over with repeat 1, then exhausts",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["telegram_voice", "voice_call"], {repeat: 1, ack_timeout_seconds: 120})
            ]),
            "2026-01-15T10:00:00.000Z"
          ),
        [
          "2026-01-15T10:00:00.000Z attempt #0 alice telegram_voice",
          "2026-01-15T10:00:00.000Z step #0",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:02:00.000Z gen 1",
          "2026-01-15T10:02:00.000Z attempt #1 alice voice_call",
          "2026-01-15T10:02:00.000Z step #1",
          "2026-01-15T10:02:00.000Z wake_at 2026-01-15T10:04:00.000Z gen 2",
          "2026-01-15T10:04:00.000Z attempt #2 alice telegram_voice",
          "2026-01-15T10:04:00.000Z step #2",
          "2026-01-15T10:04:00.000Z wake_at 2026-01-15T10:06:00.000Z gen 3",
          "2026-01-15T10:06:00.000Z attempt #3 alice voice_call",
          "2026-01-15T10:06:00.000Z step #3",
          "2026-01-15T10:06:00.000Z wake_at 2026-01-15T10:08:00.000Z gen 4",
          "2026-01-15T10:08:00.000Z exhausted"
        ]
      ],
      [
        "pages a sequential group one member at a time, each with their own ack timeout",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call"], {repeat: 0, ack_timeout_seconds: 60}),
              member("bob", ["sms", "email"], {repeat: 0, ack_timeout_seconds: 300})
            ]),
            "2026-01-15T10:00:00.000Z"
          ),
        [
          "2026-01-15T10:00:00.000Z attempt #0 alice voice_call",
          "2026-01-15T10:00:00.000Z step #0",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:01:00.000Z gen 1",
          "2026-01-15T10:01:00.000Z attempt #1 bob sms",
          "2026-01-15T10:01:00.000Z step #1",
          "2026-01-15T10:01:00.000Z wake_at 2026-01-15T10:06:00.000Z gen 2",
          "2026-01-15T10:06:00.000Z attempt #2 bob email",
          "2026-01-15T10:06:00.000Z step #2",
          "2026-01-15T10:06:00.000Z wake_at 2026-01-15T10:11:00.000Z gen 3",
          "2026-01-15T10:11:00.000Z exhausted"
        ]
      ],
      [
        "pages a parallel group side by side, waiting the longest ack timeout of those paged",
        () =>
          timeline(
            snapshot("parallel", [
              member("alice", ["telegram_voice", "voice_call", "sms"], {repeat: 0, ack_timeout_seconds: 60}),
              member("bob", ["email"], {repeat: 1, ack_timeout_seconds: 180})
            ]),
            "2026-01-15T10:00:00.000Z"
          ),
        [
          "2026-01-15T10:00:00.000Z attempt #0 alice telegram_voice",
          "2026-01-15T10:00:00.000Z attempt #0 bob email",
          "2026-01-15T10:00:00.000Z step #0",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:03:00.000Z gen 1",
          "2026-01-15T10:03:00.000Z attempt #1 alice voice_call",
          "2026-01-15T10:03:00.000Z attempt #1 bob email",
          "2026-01-15T10:03:00.000Z step #1",
          "2026-01-15T10:03:00.000Z wake_at 2026-01-15T10:06:00.000Z gen 2",
          "2026-01-15T10:06:00.000Z attempt #2 alice sms",
          "2026-01-15T10:06:00.000Z step #2",
          "2026-01-15T10:06:00.000Z wake_at 2026-01-15T10:07:00.000Z gen 3",
          "2026-01-15T10:07:00.000Z exhausted"
        ]
      ],
      [
        "stops paging when acknowledged between steps",
        () =>
          timeline(
            snapshot("sequential", [member("alice", ["telegram_voice", "voice_call"], {repeat: 1})]),
            "2026-01-15T10:00:00.000Z",
            {ackAt: "2026-01-15T10:03:10.000Z"}
          ),
        [
          "2026-01-15T10:00:00.000Z attempt #0 alice telegram_voice",
          "2026-01-15T10:00:00.000Z step #0",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:02:00.000Z gen 1",
          "2026-01-15T10:02:00.000Z attempt #1 alice voice_call",
          "2026-01-15T10:02:00.000Z step #1",
          "2026-01-15T10:02:00.000Z wake_at 2026-01-15T10:04:00.000Z gen 2",
          "2026-01-15T10:03:10.000Z acknowledged: stopped, 0 effects"
        ]
      ]
    ];
    it.each(rows)("%s", expectTimeline);
  });

  describe("skips unavailable channels", () => {
    const rows: TimelineRow[] = [
      [
        "records an unavailable channel as skipped, moves on at once, and waits for it before the chain ends",
        () =>
          timeline(
            snapshot("sequential", [member("alice", ["telegram_voice", "voice_call"], {repeat: 0})]),
            "2026-01-15T10:00:00.000Z",
            {
              outages: {"alice/telegram_voice": "Telegram relay offline"}
            }
          ),
        [
          "2026-01-15T10:00:00.000Z skip #0 alice telegram_voice: Telegram relay offline",
          "2026-01-15T10:00:00.000Z attempt #1 alice voice_call",
          "2026-01-15T10:00:00.000Z step #1",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:02:00.000Z gen 1",
          "2026-01-15T10:02:00.000Z wake_at 2026-01-15T10:03:00.000Z gen 2",
          "2026-01-15T10:03:00.000Z still waiting for telegram_voice"
        ]
      ],
      [
        "waits, naming the channels, when no channel can be used, and looks again every minute",
        () =>
          timeline(
            snapshot("sequential", [member("alice", ["voice_call", "sms"], {repeat: 0})]),
            "2026-01-15T10:00:00.000Z",
            {
              outages: {"alice/voice_call": "modem not registered", "alice/sms": "modem not registered"}
            }
          ),
        [
          "2026-01-15T10:00:00.000Z skip #0 alice voice_call: modem not registered",
          "2026-01-15T10:00:00.000Z skip #1 alice sms: modem not registered",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:01:00.000Z gen 1",
          "2026-01-15T10:01:00.000Z still waiting for voice_call, sms"
        ]
      ],
      [
        "pages the rest of a parallel step and waits only for those paged",
        () =>
          timeline(
            snapshot("parallel", [
              member("alice", ["voice_call"], {repeat: 0, ack_timeout_seconds: 600}),
              member("bob", ["email"], {repeat: 0, ack_timeout_seconds: 60})
            ]),
            "2026-01-15T10:00:00.000Z",
            {outages: {"alice/voice_call": "modem not registered"}}
          ),
        [
          "2026-01-15T10:00:00.000Z skip #0 alice voice_call: modem not registered",
          "2026-01-15T10:00:00.000Z attempt #0 bob email",
          "2026-01-15T10:00:00.000Z step #0",
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:01:00.000Z gen 1",
          "2026-01-15T10:01:00.000Z exhausted"
        ]
      ],
      [
        "records an unavailable channel at once even during quiet hours, and defers the next step to their end",
        () =>
          timeline(
            snapshot("sequential", [
              member("alice", ["voice_call", "email"], {
                repeat: 0,
                quiet_hours: quiet("22:00", "07:00", "Europe/Berlin")
              })
            ]),
            "2026-01-15T23:00:00.000Z",
            {outages: {"alice/voice_call": "modem not registered"}}
          ),
        [
          "2026-01-15T23:00:00.000Z skip #0 alice voice_call: modem not registered",
          "2026-01-15T23:00:00.000Z defer #1 alice email until 2026-01-16T06:00:00.000Z",
          "2026-01-15T23:00:00.000Z wake_at 2026-01-15T23:01:00.000Z gen 1",
          "2026-01-15T23:01:00.000Z still waiting for voice_call"
        ]
      ],
      [
        "waits, undeliverable, when the snapshot has no steps, and never exhausts",
        () => timeline(snapshot("sequential", [member("alice", [])]), "2026-01-15T10:00:00.000Z"),
        [
          "2026-01-15T10:00:00.000Z wake_at 2026-01-15T10:01:00.000Z gen 1",
          "2026-01-15T10:01:00.000Z still waiting for no channel in the plan for priority high"
        ]
      ]
    ];
    it.each(rows)("%s", expectTimeline);
  });
});
