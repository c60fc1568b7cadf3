/** The words of the API contract, each list in its documented order. */
export const PRIORITIES = ["critical", "high", "medium", "low", "info"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** 0 for the most urgent priority, counting up: what queues and lists sort by. */
export function urgencyRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

export function moreUrgent(priority: Priority, than: Priority): boolean {
  return urgencyRank(priority) < urgencyRank(than);
}

export const CHANNELS = ["telegram_voice", "voice_call", "sms", "email"] as const;
export type Channel = (typeof CHANNELS)[number];

/** `suppressed`: accepted during a maintenance window that covers it; nobody is paged (docs/schedules.md). */
export const NOTIFICATION_STATUSES = [
  "queued",
  "notifying",
  "acknowledged",
  "resolved",
  "exhausted",
  "suppressed"
] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export const OPEN_STATUSES: readonly NotificationStatus[] = ["queued", "notifying"];

export const ACK_VIA = ["api", "dashboard", "voice_call", "telegram_voice", "email", "sms"] as const;
export type AckVia = (typeof ACK_VIA)[number];

export const ATTEMPT_OUTCOMES = [
  "pending",
  "sent",
  "delivered",
  "answered",
  "no_answer",
  "busy",
  "failed",
  "skipped",
  "deferred"
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const SCOPES = [
  "notifications:send",
  "notifications:read",
  "notifications:ack",
  "recipients:read",
  "recipients:write",
  "admin"
] as const;
export type Scope = (typeof SCOPES)[number];

export const GROUP_STRATEGIES = ["sequential", "parallel"] as const;
export type GroupStrategy = (typeof GROUP_STRATEGIES)[number];

export const EVENT_TYPES = [
  "notification.sent",
  "notification.delivered",
  "notification.acknowledged",
  "notification.resolved",
  "notification.priority_raised",
  "notification.suppressed",
  "notification.released",
  "notification.undeliverable",
  "notification.recovered",
  "escalation.started",
  "escalation.step",
  "escalation.level",
  "escalation.exhausted",
  "contact.failed"
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `escalation.*` and the like: a subscription filter for every event of one family, including ones added later. */
export const EVENT_FAMILY_FILTERS = [...new Set(EVENT_TYPES.map((type) => `${type.slice(0, type.indexOf("."))}.*`))];

/** Whether a subscription filter (an event type, a family's `<family>.*`, or `*`) takes this event type. */
export function eventFilterMatches(filter: string, type: string): boolean {
  if (filter === "*" || filter === type) return true;
  return filter.endsWith(".*") && type.startsWith(filter.slice(0, -1));
}
