import {memberChainLength} from "./escalation/escalation-steps.js";
import {levelStarting} from "./escalation/escalation-planner.js";
import type {EscalationProgress} from "./notification.js";
import {
  snapshotPolicy,
  type LevelSnapshot,
  type LevelTarget,
  type MemberPolicy,
  type PolicySnapshot,
  type SnapshotContext,
  type Target
} from "./policy.js";
import type {Priority} from "./vocabulary.js";

/**
 * An escalation policy as configured: ordered levels of recipients, groups and schedules, each
 * paged `escalate_after_minutes` before the next level starts (the last level has none), and the
 * whole run `repeat` more times while nobody acknowledges (docs/escalation-policies.md).
 */
export interface EscalationPolicy {
  uuid: string;
  name: string;
  repeat: number;
  levels: PolicyLevel[];
  created_at: string;
  updated_at: string;
}

/** One level of a policy: whom it pages, and how long before the next level starts. */
export interface PolicyLevel {
  targets: string[];
  /** Null on the last level: it runs its targets' own chains to their end. */
  escalate_after_minutes: number | null;
}

/** A policy to page, each level's targets resolved at the moment given (a schedule to whom it pages then). */
export interface PolicyTarget {
  kind: "policy";
  policy: {uuid: string; name: string; repeat: number};
  levels: Array<{targets: Target[]; escalate_after_minutes: number | null}>;
}

/** Whatever an alert, a heartbeat or an integration can be sent to. */
export type SendTarget = Target | PolicyTarget;

/** The policy frozen onto an alert to `target` at `priority`: a policy's levels, or `snapshotPolicy` for everything else. */
export function snapshotTarget(target: SendTarget, priority: Priority, ctx: SnapshotContext): PolicySnapshot {
  if (target.kind !== "policy") return snapshotPolicy(target, priority, ctx);
  const levels = target.levels.map((level) =>
    levelSnapshot(level.targets, priority, ctx, level.escalate_after_minutes)
  );
  return {
    target: {uuid: target.policy.uuid, kind: "policy", name: target.policy.name},
    priority,
    strategy: "parallel",
    members: uniqueMembers(levels.flatMap((level) => level.members)),
    levels,
    repeat: target.policy.repeat
  };
}

/**
 * One level frozen: its targets' people side by side (a group's members all at once; the order
 * of a policy is its levels), each on their own channels, timeouts and quiet hours. Its steps are
 * those of its longest chain that start before `escalate_after_minutes`, the last one waiting the
 * rest of that time, so the next level starts on time however the people's timeouts add up.
 */
export function levelSnapshot(
  targets: Target[],
  priority: Priority,
  ctx: SnapshotContext,
  escalateAfterMinutes: number | null
): LevelSnapshot {
  const snapshots = targets.map((target) => snapshotPolicy(target, priority, ctx));
  const members = uniqueMembers(snapshots.flatMap((snapshot) => snapshot.members));
  return {
    targets: snapshots.map(levelTarget),
    members,
    step_waits_seconds: stepWaits(members, escalateAfterMinutes === null ? null : escalateAfterMinutes * 60)
  };
}

function levelTarget(snapshot: PolicySnapshot): LevelTarget {
  const {uuid, kind, name} = snapshot.target;
  const recipients = snapshot.members.map((member) => member.recipient_uuid);
  if (kind === "schedule") return {uuid, kind, name, on_call: snapshot.on_call ?? null, recipients};
  return {uuid, kind: kind as LevelTarget["kind"], name, recipients};
}

/**
 * The policy with level `level` paging, for each of its schedules in `schedules` (taken now, as
 * `snapshotPolicy` takes them), whoever that schedule pages now; its other targets and its steps
 * stand. Null when every schedule pages whom the level already holds.
 */
export function withSchedulesRetaken(
  policy: PolicySnapshot,
  level: number,
  schedules: PolicySnapshot[]
): PolicySnapshot | null {
  const levels = policy.levels ?? [];
  const frozen = levels[level];
  const retaken = new Map(
    schedules
      .filter((snapshot) => {
        const before = frozen.targets.find((target) => target.uuid === snapshot.target.uuid);
        return before !== undefined && before.on_call !== (snapshot.on_call ?? null);
      })
      .map((snapshot) => [snapshot.target.uuid, snapshot])
  );
  if (retaken.size === 0) return null;
  const byUuid = new Map(frozen.members.map((member) => [member.recipient_uuid, member]));
  const targets = frozen.targets.map((target) => {
    const snapshot = retaken.get(target.uuid);
    return snapshot ? levelTarget(snapshot) : target;
  });
  const members = uniqueMembers(
    targets.flatMap((target) => {
      const snapshot = retaken.get(target.uuid);
      if (snapshot) return snapshot.members;
      return target.recipients.flatMap((uuid) => byUuid.get(uuid) ?? []);
    })
  );
  const changed: LevelSnapshot = {targets, members, step_waits_seconds: frozen.step_waits_seconds};
  const next = levels.map((each, index) => (index === level ? changed : each));
  return {...policy, levels: next, members: uniqueMembers(next.flatMap((each) => each.members))};
}

// A person in two targets of a policy is one member: paged once per step, with the first target's settings.
function uniqueMembers(members: MemberPolicy[]): MemberPolicy[] {
  const seen = new Set<string>();
  return members.filter((member) => !seen.has(member.recipient_uuid) && seen.add(member.recipient_uuid));
}

/**
 * The waits after each step of a level. Nominally a step waits the longest ack timeout of the
 * members it pages (as in a parallel group); a level with an escalation delay keeps the steps
 * starting before it and stretches or cuts its last wait to end exactly there. A level with
 * nobody to page still has one step: it moves on at once, and says so (the planner).
 */
function stepWaits(members: MemberPolicy[], escalateAfterSeconds: number | null): number[] {
  const length = Math.max(0, ...members.map(memberChainLength));
  const nominal = Array.from({length}, (_, step) =>
    Math.max(
      ...members.filter((member) => memberChainLength(member) > step).map((member) => member.ack_timeout_seconds)
    )
  );
  if (escalateAfterSeconds === null) return nominal.length > 0 ? nominal : [0];
  const waits: number[] = [];
  let offset = 0;
  for (const wait of nominal) {
    if (offset >= escalateAfterSeconds) break;
    waits.push(wait);
    offset += wait;
  }
  if (waits.length === 0) return [escalateAfterSeconds];
  waits[waits.length - 1] -= offset - escalateAfterSeconds;
  return waits;
}

/**
 * For an escalation policy's chain whose next wake-up starts a level: the policy with that
 * level's schedules taken again (`retake`: a schedule's snapshot now, null once it is gone), so
 * the level pages whoever is on call when it starts; its recipients and groups stand as frozen.
 * Null when nothing changes, and for every other chain.
 */
export function levelAtStart(
  policy: PolicySnapshot,
  chain: {progress: EscalationProgress; steps_total: number},
  retake: (scheduleUuid: string) => PolicySnapshot | null
): PolicySnapshot | null {
  const level = policy.levels ? levelStarting(policy, chain) : null;
  if (level === null) return null;
  const schedules = policy.levels![level].targets.flatMap((target) =>
    target.kind === "schedule" ? (retake(target.uuid) ?? []) : []
  );
  return withSchedulesRetaken(policy, level, schedules);
}
