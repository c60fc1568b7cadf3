import {
  AdditionalProperties,
  CollectionOf,
  Default,
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
  Required
} from "@tsed/schema";
import {PRIORITIES} from "../../domain/vocabulary.js";
import {RULE_ACTIONS, RULE_FIELDS, RULE_MATCHES} from "../../domain/integration-rules.js";
import {INTEGRATION_KINDS} from "../../services/integrations/integrations.service.js";
import {COMMUNITY, SnmpV3UserModel, SnmpV3UserViewModel, TrapRuleModel} from "./snmp-integration.model.js";
import {MqttInputFieldsModel, MqttViewFieldsModel} from "./mqtt-integration.model.js";

const NOT_BLANK = /\S/;
const HTTP_URL = /^https?:\/\//;

/** One mapping rule of an email or MQTT integration (docs/integrations.md, "Mapping rules"). */
@AdditionalProperties(false)
export class TextRuleModel {
  @Required()
  @Enum(...RULE_FIELDS)
  @Description("What the rule looks at: sender, subject or body of a mail; topic or payload of an MQTT message")
  field: string;
  @Required()
  @Enum(...RULE_MATCHES)
  @Description(
    "contains: the text includes pattern; regex: a JavaScript regular expression (250 ms limit). Case is ignored"
  )
  match: string;
  @Required() @MinLength(1) @MaxLength(500) pattern: string;
  @Required() @Enum(...RULE_ACTIONS) action: string;
  @MaxLength(200)
  @Description(
    "The alert key: {0} the match, {1}... the regex groups, {name} named groups. Default: a hash of the field's text"
  )
  alert_key?: string;
  @Enum(...PRIORITIES) @Description("Default: the integration's default_priority") priority?: string;
  @MaxLength(200)
  @Description("The alert's title, a template like alert_key; default: the subject or topic")
  title?: string;
}

/** A device integration's counters. */
export class IntegrationStatsModel {
  @Required() @Integer() received: number;
  @Required() @Integer() accepted: number;
  @Required()
  @Integer()
  @Description("Too large, unreadable, rate-limited, or refused by the event handling")
  refused: number;
  @Required() @Integer() @Description("Matched no rule: kept in the integration's log") unmapped: number;
  @Required() @Nullable(String) @Format("date-time") last_event_at: string | null;
  @Required() @Nullable(String) last_error: string | null;
  @Required() @Nullable(String) @Format("date-time") last_error_at: string | null;
}

/** The writable fields of an integration: the body of POST, and what a merge patch must produce. */
@AdditionalProperties(false)
export class IntegrationInputModel extends MqttInputFieldsModel {
  @Required()
  @MinLength(1)
  @MaxLength(128)
  @Pattern(NOT_BLANK)
  @Description("Shown as the source of its alerts when the sender names none")
  name: string;
  @Required()
  @Enum(...INTEGRATION_KINDS)
  @Description(
    "generic (Klaxon's event format), alertmanager (Prometheus Alertmanager's webhook body, version 4), or a device transport: email, mqtt, snmp_trap, modbus, opcua; fixed once created"
  )
  kind: string;
  @Required() @Format("uuid") @Description("Recipient, group or schedule its alerts page") target: string;
  @Enum(...PRIORITIES)
  @Default("high")
  @Description("Priority of alerts whose severity is missing (or, from Alertmanager, not understood)")
  default_priority?: string;
  @MaxItems(50)
  @CollectionOf(TextRuleModel)
  @Description(
    "email and mqtt only: how a message maps to an alert, first match wins; none matching keeps it in the log"
  )
  rules?: TextRuleModel[];
  @Enum("page", "keep")
  @Description(
    'email, mqtt and snmp_trap only: what a message no rule maps becomes. "page" (the default): an alert with default_priority, titled by the subject, topic or trap name, merged with its repeats from the same sender. "keep": only kept in the integration\'s log, and a warning on /readyz and the dashboard'
  )
  unmapped?: string;
  @MinLength(1)
  @MaxLength(64)
  @Pattern(COMMUNITY)
  @Description(
    "snmp_trap only: the v1/v2c community its devices send with (printable ASCII, no spaces); unique across snmp_trap integrations; never shown again"
  )
  community?: string;
  @MaxItems(20)
  @CollectionOf(SnmpV3UserModel)
  @Description("snmp_trap only: authPriv users")
  v3_users?: SnmpV3UserModel[];
  @MaxItems(100)
  @CollectionOf(TrapRuleModel)
  @Description("snmp_trap only: read before the built-in traps, first match wins")
  trap_rules?: TrapRuleModel[];
}

export class IntegrationModel extends MqttViewFieldsModel {
  @Required() id: string;
  @Required() name: string;
  @Required() @Enum(...INTEGRATION_KINDS) kind: string;
  @Required() @Format("uuid") target: string;
  @Required() @Enum(...PRIORITIES) default_priority: string;
  @Required()
  @Nullable(String)
  @Format("uri")
  @Description(
    "Keyless address for senders that can neither sign nor set headers: anyone with it can send events. Admin keys only see it. null for modbus and opcua: Klaxon asks their device, nothing sends to them"
  )
  url: string | null;
  @Required()
  @Nullable(String)
  @Description("email: the address devices send to (anyone with it can send alerts); null for other kinds")
  address: string | null;
  @CollectionOf(TextRuleModel) @Description("email and mqtt only") rules?: TextRuleModel[];
  @Enum("page", "keep") @Description("email, mqtt and snmp_trap only") unmapped?: string;
  @Description("snmp_trap only: whether a community is stored (it is never shown)") community_set?: boolean;
  @CollectionOf(SnmpV3UserViewModel) @Description("snmp_trap only, without keys") v3_users?: SnmpV3UserViewModel[];
  @CollectionOf(TrapRuleModel) @Description("snmp_trap only") trap_rules?: TrapRuleModel[];
  @Required() stats: IntegrationStatsModel;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class IntegrationWithSecretModel extends IntegrationModel {
  // Not required: an idempotent replay of the create leaves the secret out (docs/api.md, "Idempotent creates").
  @Description(
    "whsec_ + base64 of 32 random bytes, for signing events as outbound webhooks are signed. Shown only in the first answer to the create (a replay leaves it out); store it now. Never for modbus and opcua: nothing sends events to them, so none is made."
  )
  secret?: string;
}

export class IntegrationPageModel {
  @Required() @CollectionOf(IntegrationModel) items: IntegrationModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

/** Klaxon's generic event (the Go library's protocol). */
@AdditionalProperties(false)
export class GenericEventModel {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Pattern(NOT_BLANK)
  @Description(
    "The alert's key within the integration: fires with the same key merge until resolved. For heartbeat, the heartbeat's name"
  )
  alert_id: string;
  @Required() @Enum("fire", "resolve", "heartbeat") action: string;
  @MaxLength(200) @Description('Short text; with message the alert reads "title: message"') title?: string;
  @MaxLength(3500) message?: string;
  @MaxLength(32)
  @Description(
    "critical, high, medium, low, info, or a common word for one (error, warning, page, P1...); default: the integration's default_priority"
  )
  severity?: string;
  @MaxLength(128) @Description("Origin label; default: the integration's name") source?: string;
  @MaxLength(2048) @Format("uri") @Pattern(HTTP_URL) link?: string;
  @Integer()
  @Min(10)
  @Max(366 * 86_400)
  @Description("heartbeat only: the period of a heartbeat created by its first ping")
  period_seconds?: number;
}

export class AlertmanagerAlertModel {
  @Required() @Enum("firing", "resolved") status: string;
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Description("Alertmanager's identity of the alert: its dedup key in Klaxon")
  fingerprint: string;
  // Typed as maps so the schema says "an object of strings"; the body itself stays a plain object.
  @CollectionOf(String)
  @Description("labels.severity sets the priority; alertname, service/job and environment/env are used too")
  labels?: Map<string, string>;
  @CollectionOf(String) @Description("summary (else description) is the message") annotations?: Map<string, string>;
  @MaxLength(4096)
  @Description("The link of the notification (when it is an http(s) URL of at most 2048 characters)")
  generatorURL?: string;
}

/** Prometheus Alertmanager's webhook body, version 4; other fields are accepted and ignored. */
export class AlertmanagerWebhookModel {
  @Required() @Enum("4") version: string;
  @Required() @MinItems(1) @CollectionOf(AlertmanagerAlertModel) alerts: AlertmanagerAlertModel[];
  @Description("firing or resolved (of the group)") status?: string;
  groupKey?: string;
  receiver?: string;
}

export class EventResultModel {
  @Required() alert_id: string;
  @Required() @Enum("fire", "resolve", "heartbeat") action: string;
  @Required() @Enum("created", "merged", "resolved", "no_open_alert", "pinged", "heartbeat_created") outcome: string;
  @Required() @Nullable(String) notification_uuid: string | null;
  @Required() @Nullable(String) heartbeat_status: string | null;
}

export class EventAnswerModel {
  @Required() integration_id: string;
  @Required() @CollectionOf(EventResultModel) results: EventResultModel[];
}

/** A message a device integration kept: it matched no rule, or was refused. */
export class KeptMessageModel {
  @Required() @Integer() id: number;
  @Required() @Format("date-time") received_at: string;
  @Required() @Enum("unmapped", "refused") outcome: string;
  @Required() @Description("The mail sender, MQTT topic or trap agent") origin: string;
  @Required() @Description("Subject, topic or trap name") summary: string;
  @Required() @Description("The text (at most 16 KiB)") body: string;
  @Required() @Integer() @Description("Bytes as received") size: number;
  @Required() @Nullable(String) reason: string | null;
}

export class KeptMessagePageModel {
  @Required() @CollectionOf(KeptMessageModel) items: KeptMessageModel[];
  @Required() @Nullable(String) @Description("Pass as `before` for older messages") next_cursor: string | null;
}
