import {
  channelsForPriority,
  contactFor,
  retryAfterFailureSeconds,
  type Group,
  type QuietHours,
  type Recipient
} from "./recipient.js";
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
}

/**
 * The escalation policy snapshotted onto a notification when it is accepted, so editing a
 * recipient or group later never changes an escalation already running. A schedule's chain is
 * the exception by design: its members are those of whoever is on call, and the runner takes a
 * new snapshot when that changes (docs/schedules.md).
 */
export interface PolicySnapshot {
  target: {uuid: string; kind: "recipient" | "group" | "schedule"; name: string};
  priority: Priority;
  strategy: GroupStrategy;
  members: MemberPolicy[];
  /** For a schedule: the recipient or group on call (or the fallback) the members are from; null for nobody. */
  on_call?: string | null;
}

/** A recipient or a group: who is paged, as opposed to a schedule, which says who that is at a time. */
export type PagedTarget =
  {kind: "recipient"; recipient: Recipient} | {kind: "group"; group: Group; members: Recipient[]};

export type Target =
  PagedTarget | {kind: "schedule"; schedule: {uuid: string; name: string}; onCall: PagedTarget | null};

/** The uuid of a recipient or group target. */
export function pagedUuid(target: PagedTarget): string {
  return target.kind === "recipient" ? target.recipient.uuid : target.group.uuid;
}

function memberPolicy(recipient: Recipient, priority: Priority): MemberPolicy {
  const channels = channelsForPriority(recipient, priority);
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
    quiet_hours: recipient.quiet_hours
  };
}

export function snapshotPolicy(target: Target, priority: Priority): PolicySnapshot {
  if (target.kind === "schedule") {
    const paged = target.onCall
      ? snapshotPolicy(target.onCall, priority)
      : {strategy: "sequential" as const, members: []};
    return {
      target: {uuid: target.schedule.uuid, kind: "schedule", name: target.schedule.name},
      priority,
      strategy: paged.strategy,
      members: paged.members,
      on_call: target.onCall ? pagedUuid(target.onCall) : null
    };
  }
  if (target.kind === "recipient") {
    return {
      target: {uuid: target.recipient.uuid, kind: "recipient", name: target.recipient.name},
      priority,
      strategy: "sequential",
      members: [memberPolicy(target.recipient, priority)]
    };
  }
  return {
    target: {uuid: target.group.uuid, kind: "group", name: target.group.name},
    priority,
    strategy: target.group.strategy,
    members: target.members.map((member) => memberPolicy(member, priority))
  };
}

/** Every channel the snapshot will use, in first-use order. */
export function plannedChannels(policy: PolicySnapshot): Channel[] {
  return [...new Set(policy.members.flatMap((member) => member.channels))];
}
