import type {Channel, Priority} from "../../src/domain/vocabulary.js";

/**
 * The escalation model's scenarios (test/services/escalation-model.test.ts generates them): their
 * shape, and the ones fast-check found and shrank while the runner was being written, kept as named cases.
 */

export interface Person {
  channels: Channel[];
  repeat: number;
  ack: number;
  retry: number;
  quiet: {start: number; end: number; zone: string} | null;
  /** Routing: high and below use only the first channel. */
  routed: boolean;
  /**
   * Routing rules as a client may write them, some leaving a priority with no channel: the gateway
   * refuses those (422) and the person is created without them. Absent in the kept scenarios.
   */
  rules?: Array<{priorities: Priority[]; channels: Channel[]}>;
}

export type Command =
  | {kind: "send"; target: number; priority: Priority; dedup: string | null}
  | {kind: "wait"; seconds: number}
  | {kind: "channel"; channel: Channel; up: boolean}
  | {kind: "script"; channel: Channel; outcome: number}
  | {kind: "ack"; pick: number}
  | {kind: "resolve"; pick: number}
  | {kind: "restart"}
  | {kind: "maintenance"; target: number; minutes: number};

/** An on-call schedule over the people: a rotation, its fallback and maybe an override. */
export interface ScheduleSpec {
  members: number[];
  shiftHours: number;
  /** How far into its first shift the rotation is at the start. */
  intoShiftMinutes: number;
  /** Who is paged when nobody is on call (a schedule must name one). */
  fallback: number;
  override: {member: number; inMinutes: number; hours: number} | null;
}

/** An escalation policy over the other targets (people, groups, schedules, by index, wrapping round). */
export interface PolicySpec {
  levels: Array<{targets: number[]; minutes: number}>;
  repeat: number;
}

export type Scenario = {
  people: Person[];
  groups: Array<{strategy: string; members: number[]}>;
  /** Absent in the scenarios kept from before schedules were generated. */
  schedules?: ScheduleSpec[];
  /** Absent in the scenarios kept from before policies were generated. */
  policies?: PolicySpec[];
  commands: Command[];
};

/** Scenarios fast-check found and shrank while the runner was being written, kept as named cases. */
export const SHRUNK: Array<[string, Scenario]> = [
  [
    "a group's member paged directly and through the group gets one call at that moment",
    {
      people: [{channels: ["voice_call"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}],
      groups: [{strategy: "sequential", members: [0]}],
      commands: [
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "send", target: 1, priority: "critical", dedup: null}
      ]
    }
  ],
  [
    "a newcomer waits behind a chain that is only waiting out its last step's window",
    {
      people: [{channels: ["voice_call"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}],
      groups: [],
      commands: [
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "resolve", pick: 0}
      ]
    }
  ],
  [
    "a failed step with no retry wait is followed at once",
    {
      people: [{channels: ["telegram_voice"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}],
      groups: [],
      commands: [
        {kind: "script", channel: "telegram_voice", outcome: 4},
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "wait", seconds: 90}
      ]
    }
  ],
  [
    "a contact made unusable by a critical alert keeps a quiet recipient's medium alert waiting, and says so",
    {
      people: [
        {
          channels: ["voice_call"],
          repeat: 0,
          ack: 30,
          retry: 0,
          quiet: {start: 0, end: 5, zone: "America/New_York"},
          routed: false
        }
      ],
      groups: [],
      commands: [
        {kind: "script", channel: "voice_call", outcome: 5},
        {kind: "send", target: 0, priority: "medium", dedup: null},
        {kind: "send", target: 0, priority: "critical", dedup: null}
      ]
    }
  ],
  [
    "alerts as urgent as one that did not wait join it rather than each calling",
    {
      people: [{channels: ["voice_call", "telegram_voice"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}],
      groups: [],
      commands: [
        {kind: "send", target: 0, priority: "medium", dedup: null},
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "wait", seconds: 90}
      ]
    }
  ],
  [
    "a group whose quiet first member passes to someone already being called waits for that call",
    {
      people: [
        {channels: ["voice_call", "telegram_voice"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false},
        {
          channels: ["telegram_voice"],
          repeat: 0,
          ack: 30,
          retry: 0,
          quiet: {start: 0, end: 5, zone: "America/New_York"},
          routed: false
        }
      ],
      groups: [
        {strategy: "sequential", members: [0]},
        {strategy: "sequential", members: [1, 0]}
      ],
      commands: [
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "send", target: 3, priority: "low", dedup: null},
        {kind: "resolve", pick: 0}
      ]
    }
  ],
  [
    "a newcomer to a person whose chain waits out a long ack timeout is paged within max_join_delay",
    {
      people: [{channels: ["voice_call", "email"], repeat: 0, ack: 300, retry: 0, quiet: null, routed: false}],
      groups: [{strategy: "sequential", members: [0]}],
      commands: [
        {kind: "send", target: 0, priority: "high", dedup: null},
        {kind: "wait", seconds: 5},
        {kind: "send", target: 1, priority: "medium", dedup: null},
        {kind: "wait", seconds: 20},
        {kind: "send", target: 0, priority: "high", dedup: null},
        {kind: "wait", seconds: 5}
      ]
    }
  ],
  [
    "a new alert after an acknowledgement calls again at once",
    {
      people: [{channels: ["voice_call", "telegram_voice"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}],
      groups: [],
      commands: [
        {kind: "send", target: 0, priority: "critical", dedup: null},
        {kind: "ack", pick: 0},
        {kind: "send", target: 0, priority: "critical", dedup: null}
      ]
    }
  ],
  [
    "an on-call person in quiet hours is paged for a high alert, not deferred (issue 30 item 2)",
    {
      people: [
        {channels: ["voice_call"], repeat: 0, ack: 60, retry: 0, quiet: {start: 8, end: 18, zone: "UTC"}, routed: false}
      ],
      groups: [],
      schedules: [{members: [0], shiftHours: 8, intoShiftMinutes: 0, fallback: 0, override: null}],
      commands: [
        {kind: "send", target: 1, priority: "high", dedup: null},
        {kind: "wait", seconds: 90}
      ]
    }
  ],
  [
    "a policy pages the schedule's on-call person through quiet hours, then the next level after a restart, and an ack stops it (issue 32)",
    {
      people: [
        {
          channels: ["voice_call"],
          repeat: 0,
          ack: 60,
          retry: 0,
          quiet: {start: 0, end: 23, zone: "UTC"},
          routed: false
        },
        {channels: ["email", "voice_call"], repeat: 0, ack: 30, retry: 0, quiet: null, routed: false}
      ],
      groups: [],
      schedules: [{members: [0], shiftHours: 8, intoShiftMinutes: 0, fallback: 0, override: null}],
      policies: [
        {
          levels: [
            {targets: [2], minutes: 5},
            {targets: [1, 0], minutes: 10}
          ],
          repeat: 1
        }
      ],
      commands: [
        {kind: "send", target: 3, priority: "high", dedup: null},
        {kind: "wait", seconds: 300},
        {kind: "restart"},
        {kind: "wait", seconds: 30},
        {kind: "ack", pick: 0},
        {kind: "wait", seconds: 900},
        {kind: "send", target: 3, priority: "medium", dedup: null},
        {kind: "wait", seconds: 3600}
      ]
    }
  ]
];
