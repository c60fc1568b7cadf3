import {describe, expect, it} from "vitest";
import {countSteps, planStep} from "../../src/domain/escalation/escalation-steps.js";
import type {PolicySnapshot} from "../../src/domain/policy.js";
import {member, snapshot} from "../support/escalation-fixtures.js";

/** Every step of a policy as "uuid:channel" lists, one per step, up to one past the end. */
function steps(policy: PolicySnapshot): string[][] {
  return Array.from({length: countSteps(policy) + 1}, (_, index) =>
    planStep(policy, index).map((contact) => `${contact.recipient_uuid}:${contact.channel}`)
  );
}

describe("planStep", () => {
  const rows: [string, PolicySnapshot, string[][]][] = [
    [
      "runs one recipient's channels in order, then again for repeat 1",
      snapshot("sequential", [member("alice", ["telegram_voice", "voice_call"], {repeat: 1})]),
      [["alice:telegram_voice"], ["alice:voice_call"], ["alice:telegram_voice"], ["alice:voice_call"], []]
    ],
    [
      "runs a sequential group's members' whole chains one after another",
      snapshot("sequential", [
        member("alice", ["voice_call"], {repeat: 1}),
        member("bob", ["sms", "email"], {repeat: 0})
      ]),
      [["alice:voice_call"], ["alice:voice_call"], ["bob:sms"], ["bob:email"], []]
    ],
    [
      "runs a parallel group side by side until the longest chain ends",
      snapshot("parallel", [
        member("alice", ["telegram_voice", "voice_call", "sms"], {repeat: 0}),
        member("bob", ["email"], {repeat: 1})
      ]),
      [["alice:telegram_voice", "bob:email"], ["alice:voice_call", "bob:email"], ["alice:sms"], []]
    ],
    [
      "has no steps for a member with no usable channel",
      snapshot("sequential", [member("alice", [], {repeat: 3})]),
      [[]]
    ],
    ["has no steps for an empty group", snapshot("parallel", []), [[]]]
  ];
  it.each(rows)("%s", (_name, policy, expected) => expect(steps(policy)).toEqual(expected));

  it("carries each contact frozen in the snapshot", () => {
    const policy = snapshot("parallel", [member("alice", ["voice_call"]), member("bob", ["email"])]);
    expect(planStep(policy, 0)).toEqual([
      {recipient_uuid: "alice", channel: "voice_call", contact: "+49-alice"},
      {recipient_uuid: "bob", channel: "email", contact: "bob@example.org"}
    ]);
  });

  it("plans nothing before the first step", () => {
    expect(planStep(snapshot("sequential", [member("alice", ["sms"])]), -1)).toEqual([]);
  });
});
