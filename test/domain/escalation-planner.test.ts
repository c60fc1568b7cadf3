import {describe, expect, it} from "vitest";
import {
  advance,
  startEscalation,
  type EscalationContext,
  type EscalationEffect,
  type EscalationEvent,
  type EscalationState
} from "../../src/domain/escalation/escalation-planner.js";
import type {PolicySnapshot} from "../../src/domain/policy.js";
import {member, quiet, snapshot} from "../support/escalation-fixtures.js";

const iso = (ms: number): string => new Date(ms).toISOString();
const at = (text: string): number => Date.parse(text);

/** Unavailable channels as "uuid/channel" -> reason. */
type Outages = Record<string, string>;

function context(policy: PolicySnapshot, outages: Outages = {}): EscalationContext {
  return {policy, channelUnavailable: (channel, recipientUuid) => outages[`${recipientUuid}/${channel}`] ?? null};
}

function render(effect: EscalationEffect): string {
  switch (effect.type) {
    case "attempt":
      return `attempt #${effect.step} ${effect.recipient_uuid} ${effect.channel}`;
    case "skip":
      return `skip #${effect.step} ${effect.recipient_uuid} ${effect.channel}: ${effect.reason}`;
    case "defer":
      return `defer #${effect.step} ${effect.recipient_uuid} ${effect.channel} until ${iso(effect.until)}`;
    case "wake_at":
      return `wake_at ${iso(effect.at)} gen ${effect.generation}`;
    case "step":
      return `step #${effect.step}`;
    case "exhausted":
      return "exhausted";
  }
}

/**
 * Plays the runner: starts the chain at `start`, fires every stored wake-up exactly when due and
 * acknowledges at `ackAt`, until nothing is scheduled or the chain waits for a channel that, in
 * these scripted outages, never comes back. One "<time> <effect>" line per effect.
 */
function timeline(policy: PolicySnapshot, start: string, options: {ackAt?: string; outages?: Outages} = {}): string[] {
  const ctx = context(policy, options.outages);
  const ackAt = options.ackAt === undefined ? null : at(options.ackAt);
  let state = startEscalation(policy, at(start));
  const lines: string[] = [];
  while (state.next_step_at !== null) {
    const now = ackAt !== null && ackAt <= state.next_step_at ? ackAt : state.next_step_at;
    const event: EscalationEvent =
      now === ackAt ? {type: "acknowledged"} : {type: "wake", generation: state.generation};
    const result = advance(state, event, now, ctx);
    if (event.type === "acknowledged")
      lines.push(`${iso(now)} acknowledged: ${result.state.status}, ${result.effects.length} effects`);
    const lookedAgainOnly = state.waiting_for !== null && result.effects.every((effect) => effect.type === "wake_at");
    if (lookedAgainOnly) {
      lines.push(`${iso(now)} still waiting for ${result.state.waiting_for?.map((wait) => wait.channel).join(", ")}`);
      break;
    }
    lines.push(...result.effects.map((effect) => `${iso(now)} ${render(effect)}`));
    state = result.state;
  }
  return lines;
}

describe("escalation planner", () => {
  describe("walks the chain", () => {
    const rows: [string, () => string[], string[]][] = [
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
    it.each(rows)("%s", (_name, run, expected) => expect(run()).toEqual(expected));
  });

  describe("skips unavailable channels", () => {
    const rows: [string, () => string[], string[]][] = [
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
        "exhausts at once when the snapshot has no steps",
        () => timeline(snapshot("sequential", [member("alice", [])]), "2026-01-15T10:00:00.000Z"),
        ["2026-01-15T10:00:00.000Z exhausted"]
      ]
    ];
    it.each(rows)("%s", (_name, run, expected) => expect(run()).toEqual(expected));
  });

  describe("respects quiet hours", () => {
    const berlinNights = quiet("22:00", "07:00", "Europe/Berlin");
    const alice = (overrides = {}) =>
      member("alice", ["voice_call"], {repeat: 0, quiet_hours: berlinNights, ...overrides});
    const rows: [string, () => string[], string[]][] = [
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
    it.each(rows)("%s", (_name, run, expected) => expect(run()).toEqual(expected));
  });

  describe("across daylight-saving changes", () => {
    const rows: [string, () => string[], string[]][] = [
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
    it.each(rows)("%s", (_name, run, expected) => expect(run()).toEqual(expected));
  });

  describe("handles events out of turn", () => {
    const policy = snapshot("sequential", [member("alice", ["voice_call", "sms"], {repeat: 0})]);
    const ctx = context(policy);
    const t0 = at("2026-01-15T10:00:00.000Z");
    const afterFirstStep = advance(startEscalation(policy, t0), {type: "wake", generation: 0}, t0, ctx).state;

    it("starts with step 0 due at once under generation 0", () => {
      expect(startEscalation(policy, t0)).toEqual({
        steps_total: 2,
        generation: 0,
        next_step_at: t0,
        status: "running",
        progress: {carried: [], current: null, noted: {}},
        waiting_for: null
      });
    });

    it("records the attempt with the contact from the snapshot and moves to the next step", () => {
      const result = advance(startEscalation(policy, t0), {type: "wake", generation: 0}, t0, ctx);
      expect(result.effects[0]).toEqual({
        type: "attempt",
        step: 0,
        recipient_uuid: "alice",
        channel: "voice_call",
        contact: "+49-alice"
      });
      expect(result.state).toEqual({
        steps_total: 2,
        generation: 1,
        next_step_at: at("2026-01-15T10:02:00.000Z"),
        status: "running",
        progress: {carried: [0], current: 0, noted: {}},
        waiting_for: null
      });
    });

    it("does nothing for a wake-up with a stale generation", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 0}, at("2026-01-15T10:02:00.000Z"), ctx);
      expect(result).toEqual({state: afterFirstStep, effects: []});
    });

    it("does nothing for a wake-up that fires before the step is due", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 1}, at("2026-01-15T10:01:59.999Z"), ctx);
      expect(result).toEqual({state: afterFirstStep, effects: []});
    });

    it("runs a late wake-up and times the next step from when it ran", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 1}, at("2026-01-15T10:30:00.000Z"), ctx);
      expect(result.effects.map(render)).toEqual([
        "attempt #1 alice sms",
        "step #1",
        "wake_at 2026-01-15T10:32:00.000Z gen 2"
      ]);
    });

    const stops: [string, EscalationEvent][] = [
      ["acknowledged", {type: "acknowledged"}],
      ["resolved", {type: "resolved"}]
    ];
    it.each(stops)("stops with no effects when %s, and later wake-ups do nothing", (_name, event) => {
      const stopped = advance(afterFirstStep, event, at("2026-01-15T10:01:00.000Z"), ctx);
      expect(stopped).toEqual({
        state: {...afterFirstStep, generation: 2, next_step_at: null, status: "stopped"},
        effects: []
      });
      for (const generation of [1, 2]) {
        expect(advance(stopped.state, {type: "wake", generation}, at("2026-01-15T10:02:00.000Z"), ctx)).toEqual({
          state: stopped.state,
          effects: []
        });
      }
    });

    it("keeps an exhausted chain exhausted when it is acknowledged afterwards", () => {
      const exhausted: EscalationState = {
        steps_total: 2,
        generation: 3,
        next_step_at: null,
        status: "exhausted",
        progress: {carried: [0, 1], current: 1, noted: {}},
        waiting_for: null
      };
      expect(advance(exhausted, {type: "acknowledged"}, at("2026-01-15T11:00:00.000Z"), ctx)).toEqual({
        state: exhausted,
        effects: []
      });
    });

    it("exhausts when the last step's ack timeout passes", () => {
      const lastStepRun = advance(
        afterFirstStep,
        {type: "wake", generation: 1},
        at("2026-01-15T10:02:00.000Z"),
        ctx
      ).state;
      const result = advance(lastStepRun, {type: "wake", generation: 2}, at("2026-01-15T10:04:00.000Z"), ctx);
      expect(result).toEqual({
        state: {...lastStepRun, generation: 3, next_step_at: null, status: "exhausted"},
        effects: [{type: "exhausted"}]
      });
    });
  });
});
