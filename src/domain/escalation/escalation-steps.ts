import type {LevelSnapshot, MemberPolicy, PolicySnapshot} from "../policy.js";
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
  if (policy.levels) return (1 + (policy.repeat ?? 0)) * levelStepsPerRun(policy.levels);
  const lengths = policy.members.map(memberChainLength);
  if (lengths.length === 0) return 0;
  return policy.strategy === "parallel" ? Math.max(...lengths) : lengths.reduce((sum, length) => sum + length, 0);
}

/** Who is contacted at step `stepIndex` (0-based), on which channel; empty past the last step. */
export function stepSlots(policy: PolicySnapshot, stepIndex: number): StepSlot[] {
  if (stepIndex < 0) return [];
  if (policy.levels) {
    const at = levelOf(policy, stepIndex);
    if (!at) return [];
    return policy.levels[at.level].members
      .filter((member) => at.stepInLevel < memberChainLength(member))
      .map((member) => slotAt(member, at.stepInLevel));
  }
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

/** Where a step of an escalation policy's chain falls: its level (0-based in `levels`), the step within it, and its run (0 first). */
export interface LevelPosition {
  level: number;
  stepInLevel: number;
  run: number;
  /** Counts levels across runs: the same level of two runs are two different starts. */
  ordinal: number;
}

function levelStepsPerRun(levels: LevelSnapshot[]): number {
  return levels.reduce((sum, level) => sum + level.step_waits_seconds.length, 0);
}

/** The level a step belongs to, for a policy's chain; null for every other chain and past the last step. */
export function levelOf(policy: PolicySnapshot, stepIndex: number): LevelPosition | null {
  const levels = policy.levels;
  if (!levels || stepIndex < 0 || stepIndex >= countSteps(policy)) return null;
  const perRun = levelStepsPerRun(levels);
  const run = Math.floor(stepIndex / perRun);
  let first = run * perRun;
  for (const [level, snapshot] of levels.entries()) {
    const length = snapshot.step_waits_seconds.length;
    if (stepIndex < first + length)
      return {level, stepInLevel: stepIndex - first, run, ordinal: run * levels.length + level};
    first += length;
  }
  return null;
}

/** The first step of the level at `ordinal` (see LevelPosition), for a policy's chain. */
export function firstStepOfLevel(policy: PolicySnapshot, ordinal: number): number {
  const levels = policy.levels ?? [];
  const run = Math.floor(ordinal / levels.length);
  const before = levels.slice(0, ordinal % levels.length);
  return run * levelStepsPerRun(levels) + levelStepsPerRun(before);
}

/** A policy level's fixed wait after this step, in seconds; null for other chains, whose steps wait their members' ack timeouts. */
export function stepWaitSeconds(policy: PolicySnapshot, stepIndex: number): number | null {
  const at = levelOf(policy, stepIndex);
  return at === null ? null : policy.levels![at.level].step_waits_seconds[at.stepInLevel];
}
