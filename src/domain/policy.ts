import {contactFor, retryAfterFailureSeconds, type Group, type QuietHours, type Recipient} from "./recipient.js";
import {planForPriority, type BoxChannels, type LeftOut} from "./plan-coverage.js";
import {quietHoursEnd} from "./escalation/quiet-hours.js";
import type {Channel, GroupStrategy, Priority} from "./vocabulary.js";

/** One person's part of an escalation, frozen when the alert is accepted. */
export interface MemberPolicy {
  recipient_uuid: string;
  name: string;
  channels: Channel[];
  contacts: Partial<Record<Channel, string>>;
  ack_timeout_seconds: number;
  /** Absent in snapshots taken before the setting existed: `retryAfterFailureSeconds` applies. */
  retry_after_failure_seconds?: number;
  repeat: number;
  quiet_hours: QuietHours | null;
  /**
   * The zone the person reads times in (their quiet hours' zone, else that of the schedule that
   * paged them); absent: the box's. Kept apart from `quiet_hours`, which a schedule drops.
   */
  time_zone?: string;
  /** Channels the member's settings allow that the box has not configured (absent: none), and why. */
  left_out?: LeftOut[];
}

/**
 * The escalation policy snapshotted onto a notification when it is accepted, so editing a
 * recipient or group later never changes an escalation already running. A schedule's chain is
 * the exception by design: its members are those of whoever is on call, and the runner takes a
 * new snapshot when that changes (docs/schedules.md).
 */
export interface PolicySnapshot {
  target: {uuid: string; kind: "recipient" | "group" | "schedule" | "policy"; name: string};
  priority: Priority;
  strategy: GroupStrategy;
  /** For an escalation policy: every level's members, once each (names and contacts are looked up here). */
  members: MemberPolicy[];
  /** For a schedule: the recipient or group on call (or the fallback) the members are from; null for nobody. */
  on_call?: string | null;
  /** For an escalation policy: its levels in order (domain/policy-levels.ts); absent for every other target. */
  levels?: LevelSnapshot[];
  /** For an escalation policy: how many times the whole policy runs again when nobody acknowledges. */
  repeat?: number;
}

/** One target of a policy level as frozen: a schedule also names whom it paged when its level started. */
export interface LevelTarget {
  uuid: string;
  kind: "recipient" | "group" | "schedule";
  name: string;
  on_call?: string | null;
  /** The recipients it pages in this level (a schedule's: those of whoever was on call when the level started). */
  recipients: string[];
}

/**
 * One level of an escalation policy as frozen onto an alert. Its members' own chains run side by
 * side from the level's start; the level's steps and their waits are fixed when the alert is
 * accepted (`step_waits_seconds`, adding up to `escalate_after_minutes` for every level but the
 * last), so re-resolving a schedule when the level starts never moves another level's steps.
 */
export interface LevelSnapshot {
  targets: LevelTarget[];
  members: MemberPolicy[];
  step_waits_seconds: number[];
}

/** A recipient or a group: who is paged, as opposed to a schedule, which says who that is at a time. */
export type PagedTarget =
  {kind: "recipient"; recipient: Recipient} | {kind: "group"; group: Group; members: Recipient[]};

/**
 * What an alert is sent to. A schedule comes with whom it pages at the moment: `onCall` is the
 * shift's recipient or group, or the fallback during a gap; `fallback` is the schedule's fallback.
 */
export type Target =
  | PagedTarget
  | {
      kind: "schedule";
      schedule: {uuid: string; name: string; timezone: string};
      onCall: PagedTarget | null;
      fallback: PagedTarget | null;
    };

/** What a snapshot depends on besides the target: the moment it is taken, and what the box can do. */
export interface SnapshotContext {
  now: number;
  box: BoxChannels;
}

/**
 * Priorities that wait for a schedule's on-call person's quiet hours; every other priority pages
 * them through their quiet hours, since being on call means being reachable (docs/schedules.md).
 */
const QUIET_FOR_ON_CALL: readonly Priority[] = ["low", "info"];

/** The uuid of a recipient or group target. */
export function pagedUuid(target: PagedTarget): string {
  return target.kind === "recipient" ? target.recipient.uuid : target.group.uuid;
}

function memberPolicy(recipient: Recipient, priority: Priority, box: BoxChannels): MemberPolicy {
  const {channels, left_out} = planForPriority(recipient, priority, box);
  const contacts: Partial<Record<Channel, string>> = {};
  for (const channel of channels) contacts[channel] = contactFor(recipient, channel) as string;
  return {
    recipient_uuid: recipient.uuid,
    name: recipient.name,
    channels,
    contacts,
    ack_timeout_seconds: recipient.escalation.ack_timeout_seconds,
    retry_after_failure_seconds: retryAfterFailureSeconds(recipient.escalation),
    repeat: recipient.escalation.repeat,
    quiet_hours: recipient.quiet_hours,
    ...(recipient.quiet_hours ? {time_zone: recipient.quiet_hours.timezone} : {}),
    ...(left_out.length > 0 ? {left_out} : {})
  };
}

function quietAt(member: MemberPolicy, priority: Priority, now: number): boolean {
  const quiet = member.quiet_hours;
  return quiet !== null && !quiet.allow_priorities.includes(priority) && quietHoursEnd(quiet, now) !== null;
}

/**
 * Whom a schedule pages, and with what quiet hours: its on-call people through their quiet hours
 * for every priority but low and info; a low or info alert while all of them are in quiet hours
 * goes to the fallback instead (the planner holds it, loudly, when there is none).
 */
function scheduleMembers(
  target: Extract<Target, {kind: "schedule"}>,
  priority: Priority,
  ctx: SnapshotContext
): {paged: PagedTarget | null; policy: Pick<PolicySnapshot, "strategy" | "members">} {
  if (!target.onCall) return {paged: null, policy: {strategy: "sequential", members: []}};
  const {paged, policy} = scheduleChoice(target, target.onCall, priority, ctx);
  // People without a zone of their own read the schedule's times in the schedule's zone.
  const zoned = (member: MemberPolicy) => ({...member, time_zone: member.time_zone ?? target.schedule.timezone});
  return {paged, policy: {...policy, members: policy.members.map(zoned)}};
}

function scheduleChoice(
  target: Extract<Target, {kind: "schedule"}>,
  onCallTarget: PagedTarget,
  priority: Priority,
  ctx: SnapshotContext
): {paged: PagedTarget; policy: Pick<PolicySnapshot, "strategy" | "members">} {
  const onCall = snapshotPolicy(onCallTarget, priority, ctx);
  if (!QUIET_FOR_ON_CALL.includes(priority))
    return {
      paged: onCallTarget,
      policy: {...onCall, members: onCall.members.map((member) => ({...member, quiet_hours: null}))}
    };
  const fallback = target.fallback;
  const allQuiet = onCall.members.length > 0 && onCall.members.every((member) => quietAt(member, priority, ctx.now));
  if (allQuiet && fallback && pagedUuid(fallback) !== pagedUuid(onCallTarget))
    return {paged: fallback, policy: snapshotPolicy(fallback, priority, ctx)};
  return {paged: onCallTarget, policy: onCall};
}

/** The policy frozen onto an alert to `target` at `priority`, taken at `ctx.now` on a box that can do `ctx.box`. */
export function snapshotPolicy(target: Target, priority: Priority, ctx: SnapshotContext): PolicySnapshot {
  if (target.kind === "schedule") {
    const {paged, policy} = scheduleMembers(target, priority, ctx);
    return {
      target: {uuid: target.schedule.uuid, kind: "schedule", name: target.schedule.name},
      priority,
      strategy: policy.strategy,
      members: policy.members,
      on_call: paged ? pagedUuid(paged) : null
    };
  }
  if (target.kind === "recipient") {
    return {
      target: {uuid: target.recipient.uuid, kind: "recipient", name: target.recipient.name},
      priority,
      strategy: "sequential",
      members: [memberPolicy(target.recipient, priority, ctx.box)]
    };
  }
  return {
    target: {uuid: target.group.uuid, kind: "group", name: target.group.name},
    priority,
    strategy: target.group.strategy,
    members: target.members.map((member) => memberPolicy(member, priority, ctx.box))
  };
}

/** Every channel the snapshot will use, in first-use order. */
export function plannedChannels(policy: PolicySnapshot): Channel[] {
  return [...new Set(policy.members.flatMap((member) => member.channels))];
}

/** Every channel left out of the snapshot because the box has not configured it, with whose plan it was in. */
export function leftOutChannels(policy: PolicySnapshot): Array<LeftOut & {recipient_uuid: string}> {
  return policy.members.flatMap((member) =>
    (member.left_out ?? []).map((out) => ({recipient_uuid: member.recipient_uuid, ...out}))
  );
}
