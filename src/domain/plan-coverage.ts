import {CHANNEL_CONTACT, missingContactReason, type Group, type Recipient} from "./recipient.js";
import {PRIORITIES, type Channel, type Priority} from "./vocabulary.js";

/**
 * Why the box cannot use a channel at all (nothing configured for it: no modem, no SMTP), or
 * null when it is configured. A configured channel that is down is not this: it stays in plans.
 */
export type BoxChannels = (channel: Channel) => string | null;

/** Every channel configured: the write-time check, which judges the recipient's own settings only. */
export const ANY_BOX: BoxChannels = () => null;

/** A channel left out of a plan, and why. */
export interface LeftOut {
  channel: Channel;
  reason: string;
}

/** One recipient's channels for one priority, in order, and those its settings allow but the box cannot use. */
export interface PriorityPlan {
  channels: Channel[];
  left_out: LeftOut[];
}

/** A priority that would page this recipient on no channel, and why in words. */
export interface PriorityGap {
  priority: Priority;
  reason: string;
}

function allowedByRules(recipient: Recipient, priority: Priority): Set<Channel> | null {
  const matching = recipient.routing_rules.filter((rule) => rule.priorities.includes(priority));
  return matching.length > 0 ? new Set(matching.flatMap((rule) => rule.channels)) : null;
}

/**
 * The channels a priority uses for this recipient: its channel_order, narrowed by the routing
 * rules naming the priority, less channels it has no contact for; then less those the box has
 * not configured, which are listed as left out rather than blocking the chain.
 */
export function planForPriority(recipient: Recipient, priority: Priority, box: BoxChannels): PriorityPlan {
  const allowed = allowedByRules(recipient, priority);
  const reachable = recipient.channel_order.filter(
    (channel) => (allowed ? allowed.has(channel) : true) && missingContactReason(recipient, channel) === null
  );
  const left_out = reachable.flatMap((channel) => {
    const reason = box(channel);
    return reason === null ? [] : [{channel, reason}];
  });
  return {channels: reachable.filter((channel) => box(channel) === null), left_out};
}

/** Why a priority's plan is empty, in the order a reader would fix it. */
function gapReason(recipient: Recipient, priority: Priority, plan: PriorityPlan): string {
  const order = recipient.channel_order;
  if (order.length === 0) return "channel_order is empty";
  const allowed = allowedByRules(recipient, priority);
  const candidates = allowed ? order.filter((channel) => allowed.has(channel)) : order;
  if (allowed && candidates.length === 0)
    return `its routing rules allow only ${[...allowed].join(", ")}, and channel_order (${order.join(", ")}) holds none of them`;
  if (plan.left_out.length > 0) return plan.left_out.map((out) => `${out.channel}: ${out.reason}`).join("; ");
  return candidates.map((channel) => `${channel}: ${missingContactReason(recipient, channel)}`).join("; ");
}

/** Every priority that would page this recipient on no channel on this box. */
export function priorityGaps(recipient: Recipient, box: BoxChannels): PriorityGap[] {
  return PRIORITIES.flatMap((priority) => {
    const plan = planForPriority(recipient, priority, box);
    return plan.channels.length > 0
      ? []
      : [{priority, reason: `priority ${priority} has no channel: ${gapReason(recipient, priority, plan)}`}];
  });
}

/** Where in a recipient a priority's gap comes from: the first routing rule naming it, else channel_order. */
export function gapPointer(recipient: Recipient, priority: Priority): string {
  const rule = recipient.routing_rules.findIndex((candidate) => candidate.priorities.includes(priority));
  return rule >= 0 ? `/routing_rules/${rule}` : "/channel_order";
}

/** The words an alert with no channel at all waits with: what `waiting_for` and every loud signal say. */
export function emptyPlanReason(priority: Priority, leftOut: LeftOut[]): string {
  const base = `no channel in the plan for priority ${priority}`;
  return leftOut.length === 0
    ? base
    : `${base} (left out: ${leftOut.map((out) => `${out.channel}, ${out.reason}`).join("; ")})`;
}

/**
 * Something in the configuration that will leave alerts with fewer channels than it seems:
 * `priority_without_channel`, a recipient or group that a priority would page on no channel on
 * this box; `channel_not_configured`, recipients with a contact for a channel the box lacks
 * (left out of their plans). Warnings: they do not make the gateway unready.
 */
export interface PlanWarning {
  kind: "priority_without_channel" | "channel_not_configured";
  /** The recipient or group concerned; null for a warning about many recipients. */
  target: {uuid: string; kind: "recipient" | "group"; name: string} | null;
  priorities: Priority[];
  detail: string;
}

const CONTACT_NOUNS: Record<"telegram_id" | "phone" | "email", string> = {
  telegram_id: "Telegram chat ids",
  phone: "phone numbers",
  email: "email addresses"
};

function recipientGapWarning(recipient: Recipient, box: BoxChannels): PlanWarning[] {
  const gaps = priorityGaps(recipient, box);
  if (gaps.length === 0) return [];
  return [
    {
      kind: "priority_without_channel",
      target: {uuid: recipient.uuid, kind: "recipient", name: recipient.name},
      priorities: gaps.map((gap) => gap.priority),
      detail: `recipient ${recipient.name}: ${gaps.map((gap) => gap.reason).join("; ")}`
    }
  ];
}

function groupGapWarning(group: Group, members: Recipient[], box: BoxChannels): PlanWarning[] {
  const empty = PRIORITIES.filter((priority) =>
    members.every((member) => planForPriority(member, priority, box).channels.length === 0)
  );
  if (empty.length === 0) return [];
  const why = members.length === 0 ? "it has no members" : "none of its members has a channel for it";
  return [
    {
      kind: "priority_without_channel",
      target: {uuid: group.uuid, kind: "group", name: group.name},
      priorities: empty,
      detail: `group ${group.name}: priorit${empty.length === 1 ? "y" : "ies"} ${empty.join(", ")} ha${empty.length === 1 ? "s" : "ve"} no channel: ${why}`
    }
  ];
}

function unconfiguredWarnings(recipients: Recipient[], box: BoxChannels): PlanWarning[] {
  const byCause = new Map<string, {contact: "telegram_id" | "phone" | "email"; reason: string; who: Set<string>}>();
  for (const recipient of recipients)
    for (const channel of recipient.channel_order) {
      const reason = box(channel);
      const contact = CHANNEL_CONTACT[channel];
      if (reason === null || recipient[contact] === null) continue;
      const key = `${contact}\u0000${reason}`;
      const entry = byCause.get(key) ?? {contact, reason, who: new Set<string>()};
      entry.who.add(recipient.uuid);
      byCause.set(key, entry);
    }
  return [...byCause.values()].map(({contact, reason, who}) => ({
    kind: "channel_not_configured",
    target: null,
    priorities: [],
    detail: `${who.size} recipient${who.size === 1 ? " has" : "s have"} ${CONTACT_NOUNS[contact]} but ${reason}: those channels are left out of their plans`
  }));
}

/** What the configuration will not do on this box, for /readyz, the Status page and `klaxon-admin doctor`. */
export function planWarnings(
  recipients: Recipient[],
  groups: Array<{group: Group; members: Recipient[]}>,
  box: BoxChannels
): PlanWarning[] {
  return [
    ...unconfiguredWarnings(recipients, box),
    ...recipients.flatMap((recipient) => recipientGapWarning(recipient, box)),
    ...groups.flatMap(({group, members}) => groupGapWarning(group, members, box))
  ];
}
