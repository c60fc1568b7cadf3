import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Property,
  Description,
  Enum,
  Format,
  Integer,
  Max,
  MaxItems,
  MaxLength,
  Min,
  MinItems,
  MinLength,
  Nullable,
  Pattern,
  Required,
  UniqueItems
} from "@tsed/schema";
import {CHANNELS, GROUP_STRATEGIES, PRIORITIES} from "../../domain/vocabulary.js";
import {INTERNATIONAL_PREFIX} from "../../lib/phone-number.js";

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

@AdditionalProperties(false)
export class EscalationSettingsModel {
  @Integer()
  @Min(15)
  @Max(3600)
  @Default(120)
  @Description("Seconds to wait for an acknowledgement before the next step")
  ack_timeout_seconds?: number;
  @Integer()
  @Min(0)
  @Max(10)
  @Default(1)
  @Description("How many more times the whole chain runs after the first pass")
  repeat?: number;
  @Integer()
  @Min(0)
  @Max(3600)
  @Default(30)
  @Description(
    "Seconds before the next step when every attempt of a step failed (busy, no answer, rejected); at most ack_timeout_seconds"
  )
  retry_after_failure_seconds?: number;
}

@AdditionalProperties(false)
export class QuietHoursModel {
  @Required() @Pattern(HH_MM) @Description("HH:MM, local to timezone") start: string;
  @Required()
  @Pattern(HH_MM)
  @Description("HH:MM, local to timezone; may be earlier than start (crosses midnight)")
  end: string;
  @Required() @MinLength(1) @MaxLength(64) @Description("IANA time zone, e.g. Europe/Berlin") timezone: string;
  @CollectionOf(String)
  @Enum(...PRIORITIES)
  @UniqueItems()
  @Description('Priorities that page even during quiet hours; default ["critical"]')
  allow_priorities?: string[];
}

@AdditionalProperties(false)
export class RoutingRuleModel {
  @Required() @CollectionOf(String) @Enum(...PRIORITIES) @MinItems(1) @UniqueItems() priorities: string[];
  @Required() @CollectionOf(String) @Enum(...CHANNELS) @UniqueItems() channels: string[];
}

/** The writable fields of a recipient: the body of POST, and the result a merge patch must produce. */
@AdditionalProperties(false)
export class RecipientInputModel {
  @MinLength(1) @MaxLength(128) name?: string;
  @Nullable(String)
  @Pattern(/^-?\d{1,20}$/)
  @Description("Telegram chat id: digits, optionally with a leading -")
  telegram_id?: string | null;
  @Nullable(String)
  @MaxLength(32)
  @Pattern(INTERNATIONAL_PREFIX)
  @Description(
    "International phone number: + and the country calling code, e.g. +49 151 12345678; spaces, dashes and brackets are allowed. Checked against libphonenumber's metadata and stored in E.164 (+4915112345678)"
  )
  phone?: string | null;
  @Nullable(String) @Format("email") @MaxLength(254) email?: string | null;
  @CollectionOf(String)
  @Enum(...CHANNELS)
  @UniqueItems()
  @MaxItems(4)
  @Description("Channels in the order they are tried")
  channel_order?: string[];
  @Property(EscalationSettingsModel) escalation?: EscalationSettingsModel;
  @Nullable(QuietHoursModel) quiet_hours?: QuietHoursModel | null;
  @CollectionOf(RoutingRuleModel)
  @MaxItems(20)
  @Description("Which channels a priority may use; a priority no rule names may use every channel")
  routing_rules?: RoutingRuleModel[];
  @Nullable(String)
  @Pattern(/^\d{4,8}$/)
  @Description(
    "Write-only PIN (4 to 8 digits) that SMS commands (ACK 4821 <PIN>) and calls to the modem must give; null removes it. Stored as a hash, never returned: see command_pin_set"
  )
  command_pin?: string | null;
}

export class ChannelAvailabilityModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() available: boolean;
  @Required() @Nullable(String) reason: string | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("When the channel's current contact last passed a test page; null: never verified")
  verified_at: string | null;
}

export class ContactFailureModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() @Description("The contact that failed, masked") contact: string;
  @Required() @Description("What the channel answered (e.g. SMTP 550, Telegram 403)") reason: string;
  @Required() @Format("date-time") at: string;
}

export class RecipientModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required() @Nullable(String) telegram_id: string | null;
  @Required() @Nullable(String) phone: string | null;
  @Required() @Nullable(String) email: string | null;
  @Required() @CollectionOf(String) channel_order: string[];
  @Required() escalation: EscalationSettingsModel;
  @Required() @Nullable(QuietHoursModel) quiet_hours: QuietHoursModel | null;
  @Required() @CollectionOf(RoutingRuleModel) routing_rules: RoutingRuleModel[];
  @Required() @Description("Whether SMS commands and calls in must give a command_pin") command_pin_set: boolean;
  @Required() @CollectionOf(ChannelAvailabilityModel) channels: ChannelAvailabilityModel[];
  @Required()
  @CollectionOf(ContactFailureModel)
  @Description(
    "Contacts a channel reported permanently unreachable; skipped until corrected, except for critical alerts"
  )
  contact_failures: ContactFailureModel[];
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class RecipientPageModel {
  @Required() @CollectionOf(RecipientModel) items: RecipientModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

@AdditionalProperties(false)
export class GroupInputModel {
  @Required() @MinLength(1) @MaxLength(128) name: string;
  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @UniqueItems()
  @MinItems(1)
  @MaxItems(100)
  @Description("Recipient uuids, in paging order")
  members: string[];
  @Enum(...GROUP_STRATEGIES) @Default("sequential") strategy?: string;
}

export class GroupModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required() @CollectionOf(String) members: string[];
  @Required() @Enum(...GROUP_STRATEGIES) strategy: string;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class GroupPageModel {
  @Required() @CollectionOf(GroupModel) items: GroupModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

/** The body of a test page: one channel, or every channel the recipient has a contact for. */
@AdditionalProperties(false)
export class TestPageInputModel {
  @Enum(...CHANNELS, "all")
  @Default("all")
  @Description('The channel to test; "all" (the default) tests every channel the recipient has a contact for')
  channel?: string;
}

export class TestPageResultModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() @Nullable(String) @Description("The contact tested, masked") contact: string | null;
  @Required()
  @Enum("sent", "delivered", "answered", "no_answer", "busy", "failed", "unavailable")
  @Description("The driver's outcome; unavailable: nothing was sent (see detail)")
  outcome: string;
  @Required() @Nullable(String) @Description("The channel's own words, or why it is unavailable") detail: string | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("Set when this test verified the contact")
  verified_at: string | null;
}

export class TestPageAnswerModel {
  @Required() @Format("uuid") recipient_uuid: string;
  @Required() @CollectionOf(TestPageResultModel) results: TestPageResultModel[];
}
