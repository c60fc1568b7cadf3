/**
 * How an MQTT integration reads a JSON payload that is not a generic event: JSON pointers
 * (RFC 6901) to the fields, and the words in the action field that fire, resolve or ping.
 */
export interface MqttJsonMapping {
  /** The alert's key; absent: the message's topic, so each topic is one alert. */
  key?: string;
  /** The field whose value says fire, resolve or heartbeat, e.g. "/state". */
  action: string;
  /** The alert's title; absent: the topic. */
  title?: string;
  /** A severity word (critical, warning, P1...); absent or unknown: the integration's default priority. */
  priority?: string;
  /** Action values that fire, e.g. ["ALARM"]; compared ignoring case. */
  fire_values: string[];
  /** Action values that resolve, e.g. ["OK", "NORMAL"]. */
  resolve_values: string[];
  /** Action values that ping the heartbeat named by the key. */
  heartbeat_values?: string[];
}

/** A topic whose every message is a heartbeat ping (a PLC's "alive" counter), whatever it carries. */
export interface MqttHeartbeatTopic {
  /** A topic filter; wildcards allowed. */
  topic: string;
  /** The heartbeat's name. */
  name: string;
  /** Created with this period on the first ping; default the heartbeat default. */
  period_seconds?: number;
}

/**
 * Whether a topic filter matches a topic (MQTT 3.1.1 section 4.7): `+` is one level, `#` the
 * rest (including none); a topic starting with `$` is never matched by a leading wildcard.
 */
export function topicMatches(filter: string, topic: string): boolean {
  const filterLevels = filter.split("/");
  const topicLevels = topic.split("/");
  if (topic.startsWith("$") && (filterLevels[0] === "+" || filterLevels[0] === "#")) return false;
  for (const [index, level] of filterLevels.entries()) {
    if (level === "#") return true;
    if (index >= topicLevels.length) return false;
    if (level !== "+" && level !== topicLevels[index]) return false;
  }
  return filterLevels.length === topicLevels.length;
}

/** Why a topic filter is not one (empty, a wildcard inside a level, `#` not last), or null when it is. */
export function topicFilterProblem(filter: string): string | null {
  if (filter.length === 0) return "a topic filter cannot be empty";
  if (filter.includes("\u0000")) return "a topic filter cannot hold a NUL character";
  const levels = filter.split("/");
  for (const [index, level] of levels.entries()) {
    if ((level.includes("+") || level.includes("#")) && level.length > 1)
      return `"${filter}": a wildcard must be a whole level`;
    if (level === "#" && index !== levels.length - 1) return `"${filter}": # must be the last level`;
  }
  return null;
}

/**
 * The value a JSON pointer (RFC 6901) names in a document, or undefined when there is none.
 * "" is the whole document; `~1` is "/" and `~0` is "~" within a name.
 */
export function pointerValue(document: unknown, pointer: string): unknown {
  if (pointer === "") return document;
  if (!pointer.startsWith("/")) return undefined;
  let value = document;
  for (const raw of pointer.slice(1).split("/")) {
    const name = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(name)) return undefined;
      value = value[Number(name)];
    } else if (typeof value === "object" && value !== null && Object.hasOwn(value, name)) {
      value = (value as Record<string, unknown>)[name];
    } else {
      return undefined;
    }
  }
  return value;
}

/** An MQTT integration's own fields on its record (the integration's kind is "mqtt"). */
export interface MqttIntegrationFields {
  /** mqtt://host[:port] or mqtts://host[:port]; no credentials in it. */
  broker_url: string;
  /** Topic filters subscribed at QoS 1. */
  topics: string[];
  username: string | null;
  /** A secret: never shown after creation, never logged. */
  password: string | null;
  /** The MQTT client id; null: `klaxon-` and the integration id's random part. */
  client_id: string | null;
  /** A PEM file of the CA that signed the broker's certificate (mqtts:// with a private CA). */
  tls_ca_file: string | null;
  json: MqttJsonMapping | null;
  heartbeat_topics: MqttHeartbeatTopic[];
}

/** Where and how one MQTT integration listens: its broker, the filters it subscribes to, and its login. */
export interface MqttSubscription {
  /** mqtt:// or mqtts:// (TLS), with the port when it is not 1883 / 8883. */
  brokerUrl: string;
  /** Topic filters (wildcards allowed), each subscribed at QoS 1. */
  topics: string[];
  username: string | null;
  password: string | null;
  /** Stable across restarts: the broker keeps the session (and the messages queued for it) under this id. */
  clientId: string;
  /** A PEM file of the CA that signed the broker's certificate, for brokers with a private CA. */
  caFile: string | null;
}

/** One integration's connection: which integration, and where and how it listens. */
export interface MqttEndpoint {
  integrationId: string;
  subscription: MqttSubscription;
}

/** The broker connection as /readyz and the integration's stats show it. */
export interface MqttConnectionState {
  /** Connected and subscribed: messages on the topic filters reach Klaxon. */
  connected: boolean;
  /** When the connection last came up or went down (ISO 8601). */
  since: string;
  /** The last failure seen (kept after a reconnect, so a flapping link shows why). */
  last_error: string | null;
}

/** An MQTT integration's broker connection, as /readyz lists it. */
export interface MqttBrokerState extends MqttConnectionState {
  integration_id: string;
  broker_url: string;
}
