import {isAbsolute} from "node:path";
import {HEARTBEAT_NAME} from "../../../domain/heartbeat.js";
import {topicFilterProblem, type MqttConnectionState, type MqttIntegrationFields} from "../../../domain/mqtt.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {FieldError} from "../../shared/errors.js";
import {defaultClientId} from "./mqtt-mapping.js";

/** The MQTT fields a client writes (all optional in a request; broker_url and topics required for kind mqtt). */
export type MqttInput = Partial<MqttIntegrationFields>;

/** What the API shows of an MQTT integration's settings: the password only as whether one is set. */
export type MqttView = Omit<MqttIntegrationFields, "password" | "client_id"> & {
  password_set: boolean;
  /** The client id in use: the one set, else the default. */
  client_id: string;
  /** The broker connection now; null while its client starts. */
  connection: MqttConnectionState | null;
};

/** The MQTT fields, in the order the API lists them; writable by merge patch like the others. */
export const MQTT_FIELDS = [
  "broker_url",
  "topics",
  "username",
  "password",
  "client_id",
  "tls_ca_file",
  "json",
  "heartbeat_topics"
] as const satisfies readonly (keyof MqttIntegrationFields)[];

function brokerUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "mqtt:" && url.protocol !== "mqtts:") return "use mqtt:// or mqtts:// (TLS)";
  if (url.username || url.password) return "put the login in username and password, not in the URL";
  if (!url.hostname) return "names no broker host";
  return null;
}

/** A JSON mapping must list some action value (the API's schema has checked its pointers). */
function jsonProblems(json: NonNullable<MqttInput["json"]>): FieldError[] {
  const values = json.fire_values.length + json.resolve_values.length + (json.heartbeat_values ?? []).length;
  return values > 0
    ? []
    : [{pointer: "/json/fire_values", detail: "list the action values that fire, resolve or ping"}];
}

/**
 * The MQTT fields' problems: an mqtt integration needs a broker and at least one topic filter;
 * another kind may not carry them. The API's schema has checked the types and lengths.
 */
export function mqttFieldProblems(
  kind: IntegrationRecord["kind"],
  input: MqttInput,
  others: readonly IntegrationRecord[]
): FieldError[] {
  const given = MQTT_FIELDS.filter((field) => input[field] !== undefined && input[field] !== null);
  if (kind !== "mqtt")
    return given.map((field) => ({pointer: `/${field}`, detail: `only an mqtt integration has ${field}`}));
  const errors: FieldError[] = [];
  const urlProblem = input.broker_url
    ? brokerUrlProblem(input.broker_url)
    : "an mqtt integration needs its broker's URL";
  if (urlProblem) errors.push({pointer: "/broker_url", detail: urlProblem});
  if (!input.topics?.length) errors.push({pointer: "/topics", detail: "subscribe to at least one topic filter"});
  for (const [index, filter] of (input.topics ?? []).entries()) {
    const problem = topicFilterProblem(filter);
    if (problem) errors.push({pointer: `/topics/${index}`, detail: problem});
  }
  if (input.password && !input.username)
    errors.push({pointer: "/username", detail: "a password needs the username it belongs to"});
  if (input.tls_ca_file && !isAbsolute(input.tls_ca_file))
    errors.push({pointer: "/tls_ca_file", detail: "an absolute path on the box"});
  for (const [index, entry] of (input.heartbeat_topics ?? []).entries()) {
    const problem = topicFilterProblem(entry.topic);
    if (problem) errors.push({pointer: `/heartbeat_topics/${index}/topic`, detail: problem});
    if (!HEARTBEAT_NAME.test(entry.name))
      errors.push({
        pointer: `/heartbeat_topics/${index}/name`,
        detail: 'a heartbeat name: lowercase letters, digits, ".", "_" and "-", at most 64'
      });
  }
  if (input.json) errors.push(...jsonProblems(input.json));
  if (input.client_id && !urlProblem && sharesClientId(input.broker_url as string, input.client_id, others))
    errors.push({
      pointer: "/client_id",
      detail:
        "another mqtt integration connects to this broker with this client id: the broker would keep only one of them"
    });
  return errors;
}

/** Whether another mqtt integration connects to the same broker host and port with this client id. */
function sharesClientId(brokerUrl: string, clientId: string, others: readonly IntegrationRecord[]): boolean {
  const host = (url: string) => {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === "mqtts:" ? "8883" : "1883")}`;
  };
  return others.some(
    (other) =>
      other.kind === "mqtt" &&
      other.broker_url !== undefined &&
      host(other.broker_url) === host(brokerUrl) &&
      (other.client_id ?? defaultClientId(other.id)) === clientId
  );
}

/** The MQTT fields to store for an mqtt integration (none for other kinds), absent ones filled with their defaults. */
export function mqttRecordFields(kind: IntegrationRecord["kind"], input: MqttInput): Partial<MqttIntegrationFields> {
  if (kind !== "mqtt") return {};
  return {
    broker_url: input.broker_url,
    topics: input.topics,
    username: input.username ?? null,
    password: input.password ?? null,
    client_id: input.client_id ?? null,
    tls_ca_file: input.tls_ca_file ?? null,
    json: input.json ?? null,
    heartbeat_topics: input.heartbeat_topics ?? []
  };
}

/** The stored MQTT fields as a merge patch's starting document: the password too, so a patch that leaves it out keeps it. */
export function mqttPatchBase(integration: IntegrationRecord & Partial<MqttIntegrationFields>): MqttInput {
  return integration.kind === "mqtt" ? Object.fromEntries(MQTT_FIELDS.map((field) => [field, integration[field]])) : {};
}

/** What the API shows of an mqtt integration's settings and connection (nothing for other kinds). */
export function mqttView(
  integration: IntegrationRecord & Partial<MqttIntegrationFields>,
  connection: MqttConnectionState | null
): Partial<MqttView> {
  if (integration.kind !== "mqtt") return {};
  return {
    broker_url: integration.broker_url ?? "",
    topics: integration.topics ?? [],
    username: integration.username ?? null,
    password_set: Boolean(integration.password),
    client_id: integration.client_id ?? defaultClientId(integration.id),
    tls_ca_file: integration.tls_ca_file ?? null,
    json: integration.json ?? null,
    heartbeat_topics: integration.heartbeat_topics ?? [],
    connection
  };
}
