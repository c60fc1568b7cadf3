import {describe, expect, it} from "vitest";
import {snapshotTarget, type PolicyTarget} from "../../src/domain/policy-levels.js";
import type {Recipient} from "../../src/domain/recipient.js";
import type {Channel} from "../../src/domain/vocabulary.js";
import {timeline} from "../support/escalation-timeline.js";

const ALL_CHANNELS = {box: () => null, now: Date.parse("2026-01-15T10:00:00.000Z")};

function person(uuid: string, channels: Channel[], ackTimeoutSeconds: number): Recipient {
  return {
    uuid,
    name: uuid,
    phone: "+4915100000001",
    email: `${uuid}@plant.lan`,
    telegram_id: "4001",
    channel_order: channels,
    routing_rules: [],
    quiet_hours: null,
    escalation: {ack_timeout_seconds: ackTimeoutSeconds, repeat: 0},
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z"
  };
}

/** Alice (voice then email, 2 min each) for 10 minutes, Bob (SMS) for 15, then Carol (email, 5 min). */
function lineThree(repeat = 0) {
  const target: PolicyTarget = {
    kind: "policy",
    policy: {uuid: "policy-1", name: "Line 3", repeat},
    levels: [
      {
        targets: [{kind: "recipient", recipient: person("alice", ["voice_call", "email"], 120)}],
        escalate_after_minutes: 10
      },
      {targets: [{kind: "recipient", recipient: person("bob", ["sms"], 60)}], escalate_after_minutes: 15},
      {targets: [{kind: "recipient", recipient: person("carol", ["email"], 300)}], escalate_after_minutes: null}
    ]
  };
  return snapshotTarget(target, "critical", ALL_CHANNELS);
}

const paging = (lines: string[]) => lines.filter((line) => / (attempt|level|exhausted|acknowledged|skip)/.test(line));

describe("an escalation policy's levels as planner steps", () => {
  it("pages each level on its people's own channels and starts the next level exactly on time", () => {
    expect(paging(timeline(lineThree(), "2026-01-15T10:00:00.000Z"))).toEqual([
      "2026-01-15T10:00:00.000Z attempt #0 alice voice_call",
      "2026-01-15T10:00:00.000Z level 1 run 1",
      "2026-01-15T10:02:00.000Z attempt #1 alice email",
      "2026-01-15T10:10:00.000Z attempt #2 bob sms",
      "2026-01-15T10:10:00.000Z level 2 run 1",
      "2026-01-15T10:25:00.000Z attempt #3 carol email",
      "2026-01-15T10:25:00.000Z level 3 run 1",
      "2026-01-15T10:30:00.000Z exhausted"
    ]);
  });

  it("runs the whole policy again with repeat, and an acknowledgement stops every level still to come", () => {
    const lines = paging(timeline(lineThree(1), "2026-01-15T10:00:00.000Z", {ackAt: "2026-01-15T10:40:00.000Z"}));
    expect(lines).toEqual([
      "2026-01-15T10:00:00.000Z attempt #0 alice voice_call",
      "2026-01-15T10:00:00.000Z level 1 run 1",
      "2026-01-15T10:02:00.000Z attempt #1 alice email",
      "2026-01-15T10:10:00.000Z attempt #2 bob sms",
      "2026-01-15T10:10:00.000Z level 2 run 1",
      "2026-01-15T10:25:00.000Z attempt #3 carol email",
      "2026-01-15T10:25:00.000Z level 3 run 1",
      "2026-01-15T10:30:00.000Z attempt #4 alice voice_call",
      "2026-01-15T10:30:00.000Z level 1 run 2",
      "2026-01-15T10:32:00.000Z attempt #5 alice email",
      "2026-01-15T10:40:00.000Z acknowledged: stopped, 0 effects"
    ]);
  });

  it("moves on at once past a level nobody in it can be reached on, and pages it once they can", () => {
    const lines = paging(
      timeline(lineThree(), "2026-01-15T10:00:00.000Z", {outages: {"bob/sms": "the modem is not responding"}})
    );
    expect(lines).toEqual([
      "2026-01-15T10:00:00.000Z attempt #0 alice voice_call",
      "2026-01-15T10:00:00.000Z level 1 run 1",
      "2026-01-15T10:02:00.000Z attempt #1 alice email",
      "2026-01-15T10:10:00.000Z skip #2 bob sms: the modem is not responding",
      "2026-01-15T10:10:00.000Z attempt #3 carol email",
      "2026-01-15T10:10:00.000Z level 3 run 1"
    ]);
  });
});
