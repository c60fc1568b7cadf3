import type {MemberPolicy, PolicySnapshot} from "../policy.js";
import type {Channel} from "../vocabulary.js";

/** One person to contact on one channel in a step of the chain. */
export interface StepContact {
  recipient_uuid: string;
  channel: Channel;
  /** The address frozen in the snapshot; null only when a snapshot names a channel without one. */
  contact: string | null;
}

/** A step's contact together with the member policy it came from (timeouts, quiet hours). */
export interface StepSlot {
  member: MemberPolicy;
  channel: Channel;
}

/** Steps in one member's own chain: each of its channels in order, the whole run 1 + repeat times. */
export function memberChainLength(member: MemberPolicy): number {
  return member.channels.length * (1 + member.repeat);
}

/**
 * Steps in the chain. Sequential groups (and a single recipient) run the members' chains one
 * after another; parallel groups run them side by side, so the longest one sets the count.
 */
export function countSteps(policy: PolicySnapshot): number {
  const lengths = policy.members.map(memberChainLength);
  if (lengths.length === 0) return 0;
  return policy.strategy === "parallel" ? Math.max(...lengths) : lengths.reduce((sum, length) => sum + length, 0);
}

/** Who is contacted at step `stepIndex` (0-based), on which channel; empty past the last step. */
export function stepSlots(policy: PolicySnapshot, stepIndex: number): StepSlot[] {
  if (stepIndex < 0) return [];
  if (policy.strategy === "parallel") {
    return policy.members
      .filter((member) => stepIndex < memberChainLength(member))
      .map((member) => slotAt(member, stepIndex));
  }
  let first = 0;
  for (const member of policy.members) {
    const length = memberChainLength(member);
    if (stepIndex < first + length) return [slotAt(member, stepIndex - first)];
    first += length;
  }
  return [];
}

/** The contacts of step `stepIndex`: for a parallel group every member whose chain is that long. */
export function planStep(policy: PolicySnapshot, stepIndex: number): StepContact[] {
  return stepSlots(policy, stepIndex).map(({member, channel}) => ({
    recipient_uuid: member.recipient_uuid,
    channel,
    contact: member.contacts[channel] ?? null
  }));
}

function slotAt(member: MemberPolicy, indexInChain: number): StepSlot {
  return {member, channel: member.channels[indexInChain % member.channels.length]};
}
