import {
  AdditionalProperties,
  Allow,
  array,
  CollectionOf,
  Deprecated,
  Description,
  Enum,
  Example,
  Format,
  from,
  Integer,
  MaxLength,
  Property,
  MinLength,
  Nullable,
  Pattern,
  Required,
  Schema
} from "@tsed/schema";
import {ATTEMPT_OUTCOMES, CHANNELS, NOTIFICATION_STATUSES, PRIORITIES} from "../../domain/vocabulary.js";
import {HEARTBEAT_STATUSES} from "../../domain/heartbeat.js";

const NOT_BLANK = /\S/;

@AdditionalProperties(false)
export class SendNotificationModel {
  @Required()
  @Format("uuid")
  @Description("Recipient, recipient group or on-call schedule UUID (a schedule pages whoever is on call at each step)")
  @Example("0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b")
  recipient_uuid: string;

  @Required()
  @MinLength(1)
  @MaxLength(4000)
  @Pattern(NOT_BLANK)
  @Description("Alert text, 1 to 4000 characters after trimming")
  message: string;

  @Required() @Enum(...PRIORITIES) priority: (typeof PRIORITIES)[number];

  @MaxLength(128) @Description("Free label of the origin of the alert") source?: string;

  @MinLength(1)
  @MaxLength(255)
  @Description("While a notification with this key is open for the same target, sends merge into it")
  dedup_key?: string;

  @MaxLength(2048)
  @Format("uri")
  @Pattern(/^https?:\/\//)
  @Description("Absolute http(s) link to the source system")
  link?: string;

  @MaxLength(128) service?: string;

  @MaxLength(128) environment?: string;
}

@AdditionalProperties(false)
export class AcknowledgeModel {
  @MaxLength(128) @Description("Who acknowledges; defaults to the API key's name") by?: string;
  @MaxLength(1000) note?: string;
}

export class NotificationShortModel {
  @Required() @Enum(...NOTIFICATION_STATUSES) status: string;
  @Required() notification_uuid: string;
  @Required() @CollectionOf(String) channels_planned: string[];
  @Required() escalation_chain_id: string;
}

export class NotificationLinksModel {
  @Required() self: string;
  @Required() ack: string;
}

export class WaitReasonModel {
  @Required()
  @Nullable(String)
  @Description(
    `${CHANNELS.join(", ")}; null when the alert waits for no channel at all (no channel in its plan, quiet hours of everyone a schedule can page)`
  )
  channel: string | null;
  @Required()
  @Description('Why the channel cannot be used now, e.g. "SMTP is not configured (smtp.host and smtp.from)"')
  reason: string;
}

export class LeftOutChannelModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() recipient_uuid: string;
  @Required() @Description('Why the box cannot use it, e.g. "no modem is configured (modem.port)"') reason: string;
}

export class LevelTargetModel {
  @Required() uuid: string;
  @Required() @Enum("recipient", "group", "schedule") kind: string;
  @Required() name: string;
  @Nullable(String) @Description("For a schedule: the recipient or group it paged when the level started") on_call?:
    string | null;
}

export class LevelPageModel {
  @Required() recipient_uuid: string;
  @Required() name: string;
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() @Format("date-time") @Description("When the level first paged this person") at: string;
  @Required() @Integer() @Description("The run of the policy (from 1) it was in") run: number;
}

export class LevelProgressModel {
  @Required() @Integer() number: number;
  @Required() @CollectionOf(LevelTargetModel) targets: LevelTargetModel[];
  @Required() @CollectionOf(LevelPageModel) paged: LevelPageModel[];
}

export class PolicyProgressModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required()
  @Nullable(Number)
  @Description("The level (from 1) of the step carried most recently; null before the first")
  level: number | null;
  @Required() @Nullable(Number) @Description("The run (from 1) that level is in") run: number | null;
  @Required() @Integer() @Description("1 + the policy's repeat") runs: number;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("When the next level starts; null when the chain does not run or no level follows")
  next_level_at: string | null;
  @Required() @CollectionOf(LevelProgressModel) levels: LevelProgressModel[];
}

export class EscalationStateModel {
  @Required()
  @Integer()
  @Description(
    "The number (from 1) of the step carried most recently, as attempts and escalation.step events number it; 0 before the first"
  )
  step: number;
  @Required()
  @Integer()
  @Description("How many steps were carried so far: at least one of their contacts reached a channel")
  steps_carried: number;
  @Required() @Integer() steps_total: number;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("When the chain next looks at its steps")
  next_step_at: string | null;
  // Not @Nullable(Array) @CollectionOf(...): Ts.ED then documents an array of anything, with a $comment OpenAPI 3.0 does not allow.
  @Required()
  @Schema(array().items(from(WaitReasonModel)).nullable())
  @Description(
    "Set while the alert is undeliverable: no remaining step can be carried because these channels cannot be used now; it goes as soon as one can"
  )
  waiting_for: WaitReasonModel[] | null;
  @Required()
  @Nullable(String)
  @Description(
    "The id of the alert whose paging this one joined (an alert storm to the same person): it is named in a page at next_step_at, at most storm.max_join_delay_seconds after it was accepted"
  )
  grouped_with: string | null;
  @Property(PolicyProgressModel)
  @Description(
    "For an alert sent to an escalation policy: the level it is on, whom each level paged, when the next level starts"
  )
  policy?: PolicyProgressModel;
}

export class AttemptModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() recipient_uuid: string;
  @Required()
  @Allow("")
  @Description("Masked contact, e.g. +49******789; empty when the step was skipped before a contact was chosen")
  target: string;
  @Required() @Integer() @Description("The step of the plan it belongs to, numbered from 1") step: number;
  @Required() @Format("date-time") started_at: string;
  @Required() @Nullable(String) finished_at: string | null;
  @Required() @Enum(...ATTEMPT_OUTCOMES) outcome: string;
  @Required()
  @Nullable(String)
  @Description(
    'The channel\'s answer, or why the attempt did not reach the person, e.g. "accepted by the SMTP server: 250 OK"'
  )
  detail: string | null;
  @Required()
  @Nullable(String)
  @Deprecated()
  @Description(
    "Deprecated since 0.2.0, removed in 0.3.0: read detail. The same text, but only when the outcome is no_answer, busy, failed, skipped or deferred; null otherwise"
  )
  error: string | null;
}

export class HoldingWindowModel {
  @Required() uuid: string;
  @Required() @Description("The window's reason, as its creator wrote it") reason: string;
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") ends_at: string;
}

// Echoed fields carry @Allow(""): the send and acknowledge bodies accept an empty string for them.
export class RecoveredChangeModel {
  @Required() @Enum("accepted", "acknowledged", "resolved") change: string;
  @Required() @Description("The former active that had accepted it") from_box: string;
  @Required() @Description("The hand-over it came with: the former active's journal") hand_over: string;
  @Required() @Format("date-time") recovered_at: string;
}

export class NotificationModel {
  @Required() @Example("notif_01JD8X3Q4R5S6T7V8W9XAYBZC0") id: string;
  @Required() @Enum(...NOTIFICATION_STATUSES) status: string;
  @Required() recipient_uuid: string;
  @Required() message: string;
  @Required() @Enum(...PRIORITIES) priority: string;
  @Required() @CollectionOf(String) channels_planned: string[];
  @Required()
  @CollectionOf(LeftOutChannelModel)
  @Description(
    "Channels the recipients' settings allow that this box has not configured: left out of the plan, so they neither block the chain nor raise the alarm"
  )
  channels_left_out: LeftOutChannelModel[];
  @Required() escalation_chain_id: string;
  @Required() @Format("date-time") created_at: string;
  @Required() links: NotificationLinksModel;
  @Required() @Nullable(String) @Allow("") source: string | null;
  @Required() @Nullable(String) dedup_key: string | null;
  @Required() @Nullable(String) link: string | null;
  @Required() @Nullable(String) @Allow("") service: string | null;
  @Required() @Nullable(String) @Allow("") environment: string | null;
  @Required() @Integer() occurrences: number;
  @Required() @Format("date-time") updated_at: string;
  @Required() @Nullable(String) acknowledged_at: string | null;
  @Required() @Nullable(String) @Allow("") acknowledged_by: string | null;
  @Required()
  @Nullable(String)
  @Description("api, dashboard, voice_call, telegram_voice, email or sms")
  acknowledged_via: string | null;
  @Required() @Nullable(String) @Allow("") acknowledged_note: string | null;
  @Required() @Nullable(String) resolved_at: string | null;
  @Required() escalation: EscalationStateModel;
  @Required() @CollectionOf(AttemptModel) attempts: AttemptModel[];
  @Required()
  @Nullable(HoldingWindowModel)
  @Description("The maintenance window that held (or holds) this alert; null for one no window held")
  maintenance_window: HoldingWindowModel | null;
  @CollectionOf(RecoveredChangeModel)
  @Description(
    "Only on an alert a former active accepted and this box lacked after a takeover: which of its changes the former active handed over when it came back (docs/high-availability.md)"
  )
  recovered?: RecoveredChangeModel[];
}

export class NotificationPageModel {
  @Required() @CollectionOf(NotificationModel) items: NotificationModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

export class HeartbeatAfterPageModel {
  @Required() name: string;
  @Required() @Enum(...HEARTBEAT_STATUSES) status: string;
  @Required() @Nullable(String) @Format("date-time") @Description("When silence pages again") down_at: string | null;
  @Required()
  @Description("The heartbeat's state in words, e.g. still down: its next failure pages again")
  detail: string;
}

/** The answer to a resolve: for a heartbeat's page, also what the heartbeat is now. */
export class ResolvedNotificationModel extends NotificationModel {
  @Property(HeartbeatAfterPageModel) heartbeat?: HeartbeatAfterPageModel;
}
