import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Format,
  Integer,
  Max,
  MaxItems,
  MaxLength,
  Min,
  MinLength,
  Nullable,
  Pattern,
  Required
} from "@tsed/schema";
import {PlcInputFieldsModel, PlcViewFieldsModel} from "./plc-integration.model.js";

const POINTER = /^(\/([^~/]|~[01])*)*$/;
const POINTER_HELP = 'A JSON pointer (RFC 6901) into the payload, e.g. "/state"';

/** How an mqtt integration reads a JSON payload that is not a generic event (docs/integrations.md, "MQTT"). */
@AdditionalProperties(false)
export class MqttJsonMappingModel {
  @MaxLength(200) @Pattern(POINTER) @Description(`${POINTER_HELP}; the alert key. Default: the topic`) key?: string;
  @Required()
  @MaxLength(200)
  @Pattern(POINTER)
  @Description(`${POINTER_HELP}; the value saying fire or resolve`)
  action: string;
  @MaxLength(200)
  @Pattern(POINTER)
  @Description(`${POINTER_HELP}; the alert's title. Default: the topic`)
  title?: string;
  @MaxLength(200)
  @Pattern(POINTER)
  @Description(`${POINTER_HELP}; a severity word. Unknown or absent: the integration's default_priority`)
  priority?: string;
  @Required()
  @MaxItems(20)
  @CollectionOf(String)
  @Description('Action values that fire, e.g. ["ALARM"]; case is ignored')
  fire_values: string[];
  @Required()
  @MaxItems(20)
  @CollectionOf(String)
  @Description('Action values that resolve, e.g. ["OK"]')
  resolve_values: string[];
  @MaxItems(20)
  @CollectionOf(String)
  @Description("Action values that ping the heartbeat named by the key")
  heartbeat_values?: string[];
}

/** A topic whose every message pings a heartbeat. */
@AdditionalProperties(false)
export class MqttHeartbeatTopicModel {
  @Required() @MinLength(1) @MaxLength(256) @Description("A topic filter; + and # allowed") topic: string;
  @Required() @MinLength(1) @MaxLength(64) @Description("The heartbeat's name") name: string;
  @Integer()
  @Min(10)
  @Max(31_622_400)
  @Description("The period it is created with on its first ping")
  period_seconds?: number;
}

/** The mqtt kind's writable fields, which the integration's input (POST, and what a merge patch must produce) extends. */
export class MqttInputFieldsModel extends PlcInputFieldsModel {
  @MaxLength(512)
  @Description("mqtt only, required: mqtt://host[:port] or mqtts://host[:port] (TLS)")
  broker_url?: string;
  @MaxItems(50)
  @CollectionOf(String)
  @Description("mqtt only, required: topic filters, subscribed at QoS 1")
  topics?: string[];
  @Nullable(String) @MaxLength(256) username?: string | null;
  @Nullable(String)
  @MaxLength(256)
  @Description("Never shown again: the answers say password_set")
  password?: string | null;
  @Nullable(String)
  @MaxLength(128)
  @Description("Default: klaxon- and the integration id's random part, the same on every start")
  client_id?: string | null;
  @Nullable(String)
  @MaxLength(1024)
  @Description("A PEM file of the CA that signed the broker's certificate (absolute path on the box)")
  tls_ca_file?: string | null;
  @Nullable(MqttJsonMappingModel) json?: MqttJsonMappingModel | null;
  @MaxItems(50) @CollectionOf(MqttHeartbeatTopicModel) heartbeat_topics?: MqttHeartbeatTopicModel[];
}

/** The broker connection of an mqtt integration. */
export class MqttConnectionModel {
  @Required() connected: boolean;
  @Required() @Format("date-time") @Description("When it last came up or went down") since: string;
  @Required() @Nullable(String) @Description("The last failure seen, kept after a reconnect") last_error: string | null;
}

/** What an mqtt integration shows of its settings: never the password. */
export class MqttViewFieldsModel extends PlcViewFieldsModel {
  @Description("mqtt only") broker_url?: string;
  @CollectionOf(String) @Description("mqtt only") topics?: string[];
  @Nullable(String) username?: string | null;
  @Description("mqtt only: whether a password is stored (it is never shown)") password_set?: boolean;
  @Description("mqtt only: the client id in use") client_id?: string;
  @Nullable(String) tls_ca_file?: string | null;
  @Nullable(MqttJsonMappingModel) json?: MqttJsonMappingModel | null;
  @CollectionOf(MqttHeartbeatTopicModel) heartbeat_topics?: MqttHeartbeatTopicModel[];
  @Nullable(MqttConnectionModel)
  @Description("mqtt only: the broker connection now; null while its client starts")
  connection?: MqttConnectionModel | null;
}
