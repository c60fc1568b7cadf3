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
 * recipient or group later never changes an escalation already running.
 */
export interface PolicySnapshot {
  target: {uuid: string; kind: "recipient" | "group"; name: string};
  priority: Priority;
  strategy: GroupStrategy;
  members: MemberPolicy[];
}

export type Target = {kind: "recipient"; recipient: Recipient} | {kind: "group"; group: Group; members: Recipient[]};

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
