import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {advance, countSteps, startEscalation, type EscalationTransition} from "../../src/domain/escalation/index.js";
import {quietHoursEnd} from "../../src/domain/escalation/quiet-hours.js";
import {ANY_BOX, planForPriority, priorityGaps} from "../../src/domain/plan-coverage.js";
import {snapshotPolicy, type PagedTarget, type PolicySnapshot, type Target} from "../../src/domain/policy.js";
import type {Recipient} from "../../src/domain/recipient.js";
import {PRIORITIES, type Priority} from "../../src/domain/vocabulary.js";
import {boxArb, recipientArb} from "../support/plan-arbitraries.js";

// Plans of any recipient, group or schedule on any box: refused at write time, or they page, or
// they wait loudly (undeliverable, waiting_for set). Never an alert that ends, or sits, in silence.
const NOW = Date.parse("2026-03-10T12:00:00Z");
const nowArb = fc.integer({min: NOW, max: NOW + 7 * 86_400_000});
const priorityArb = fc.constantFrom(...PRIORITIES);

function firstWake(policy: PolicySnapshot, now: number): EscalationTransition {
  return advance(startEscalation(policy, now), {type: "wake", generation: 0}, now, {
    policy,
    channelUnavailable: () => null
  });
}

const attempted = (transition: EscalationTransition) =>
  transition.effects.flatMap((effect) => (effect.type === "attempt" ? [effect.recipient_uuid] : []));

const quietFor = (recipient: Recipient, priority: Priority, now: number) =>
  recipient.quiet_hours !== null &&
  !recipient.quiet_hours.allow_priorities.includes(priority) &&
  quietHoursEnd(recipient.quiet_hours, now) !== null;

/** A recipient accepted at write time: no priority without a channel on its own settings. */
const acceptedArb = (uuid: string) => recipientArb(uuid).filter((r) => priorityGaps(r, ANY_BOX).length === 0);

describe("plans", () => {
  it("of any recipient on any box are refused at write time, or page, or wait loudly with no channel", () => {
    fc.assert(
      fc.property(recipientArb("maria"), boxArb, priorityArb, (recipient, {box, unconfigured}, priority) => {
        const refused = priorityGaps(recipient, ANY_BOX).find((gap) => gap.priority === priority);
        if (refused) {
          expect(refused.reason).toMatch(new RegExp(`^priority ${priority} has no channel: `));
          return;
        }
        const policy = snapshotPolicy({kind: "recipient", recipient: {...recipient, quiet_hours: null}}, priority, {
          now: NOW,
          box
        });
        const plan = planForPriority(recipient, priority, ANY_BOX).channels;
        // Left out are exactly the planned channels the box lacks; nothing else is lost.
        expect(
          [...policy.members[0].channels, ...(policy.members[0].left_out ?? []).map((out) => out.channel)].sort()
        ).toEqual([...plan].sort());
        expect(policy.members[0].channels.some((channel) => unconfigured.includes(channel))).toBe(false);
        const wake = firstWake(policy, NOW);
        expect(wake.state.status).toBe("running");
        if (countSteps(policy) > 0) expect(attempted(wake)).toEqual(["maria"]);
        else
          expect(wake.state.waiting_for).toEqual([
            {
              channel: null,
              reason: expect.stringMatching(new RegExp(`^no channel in the plan for priority ${priority}`))
            }
          ]);
      }),
      {numRuns: 400}
    );
  });

  it("of a group page a member who has a channel, or wait loudly when none has", () => {
    fc.assert(
      fc.property(
        fc.tuple(recipientArb("anna"), recipientArb("dora"), recipientArb("jonas")),
        fc.constantFrom("sequential" as const, "parallel" as const),
        boxArb,
        priorityArb,
        (members, strategy, {box}, priority) => {
          const calm = members.map((member) => ({...member, quiet_hours: null}));
          const group: PagedTarget = {
            kind: "group",
            group: {uuid: "g", name: "Shift B", members: [], strategy, created_at: "", updated_at: ""},
            members: calm
          };
          const wake = firstWake(snapshotPolicy(group, priority, {now: NOW, box}), NOW);
          const reachable = calm.filter((member) => planForPriority(member, priority, box).channels.length > 0);
          expect(wake.state.status).toBe("running");
          if (reachable.length > 0) expect(attempted(wake).length).toBeGreaterThan(0);
          else expect(wake.state.waiting_for).toEqual([{channel: null, reason: expect.any(String)}]);
        }
      ),
      {numRuns: 200}
    );
  });

  it("of a schedule page the on-call person through quiet hours but for low and info, which go to the fallback or wait loudly", () => {
    fc.assert(
      fc.property(
        acceptedArb("maria"),
        fc.option(acceptedArb("hans")),
        priorityArb,
        nowArb,
        (onCall, fallback, priority, now) => {
          const target: Target = {
            kind: "schedule",
            schedule: {uuid: "s", name: "Line 3", timezone: "Europe/Berlin"},
            onCall: {kind: "recipient", recipient: onCall},
            fallback: fallback && {kind: "recipient", recipient: fallback}
          };
          const policy = snapshotPolicy(target, priority, {now, box: ANY_BOX});
          // Each person reads times in their own zone (quiet hours'), else the schedule's (issue 33).
          for (const member of policy.members) {
            const person = member.recipient_uuid === "maria" ? onCall : fallback;
            expect(member.time_zone).toBe(person?.quiet_hours?.timezone ?? "Europe/Berlin");
          }
          const wake = firstWake(policy, now);
          const paged = attempted(wake);
          // Whatever happens, a schedule's alert pages someone now or says loudly why not.
          expect(paged.length > 0 || wake.state.waiting_for !== null).toBe(true);
          if (!["low", "info"].includes(priority)) expect(paged).toEqual(["maria"]);
          else if (!quietFor(onCall, priority, now)) expect(paged).toEqual(["maria"]);
          else if (fallback && !quietFor(fallback, priority, now)) expect(paged).toEqual(["hans"]);
          else
            expect(wake.state.waiting_for?.[0].reason).toMatch(
              /^everyone the schedule can page is in quiet hours until /
            );
        }
      ),
      {numRuns: 400}
    );
  });
});
