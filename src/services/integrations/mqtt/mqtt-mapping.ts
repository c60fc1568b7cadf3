import {pointerValue, topicMatches, type MqttIntegrationFields, type MqttJsonMapping} from "../../../domain/mqtt.js";
import type {RegexMatcher} from "../../../domain/integration-rules.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import {
  actionFromGenericEvent,
  genericEventActions,
  priorityOfSeverity,
  textRuleActions,
  type GenericEvent,
  type InboundAction
} from "../intake/integration-payloads.js";

/** What an MQTT message asks for; no actions means it is kept in the log, `note` saying why. */
export interface MqttMapping {
  actions: InboundAction[];
  note: string | null;
}

type MqttIntegration = IntegrationRecord & Partial<Pick<MqttIntegrationFields, "json" | "heartbeat_topics">>;

const TITLE_MAX = 200;
/** The client id's stable part: the random end of the integration id, so it stays within MQTT 3.1.1's 23 characters. */
const CLIENT_ID_TAIL = 16;

/** The client id an integration connects with when none is set: the same on every start, so the broker's session is found again. */
export function defaultClientId(integrationId: string): string {
  return `klaxon-${integrationId.slice(-CLIENT_ID_TAIL)}`;
}

function scalarText(value: unknown): string | null {
  if (typeof value === "string") return value.trim() || null;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

const listed = (values: readonly string[] | undefined, word: string) =>
  (values ?? []).some((value) => value.trim().toLowerCase() === word.toLowerCase());

/** A JSON payload through the integration's pointers: the event it means, or why it maps to nothing. */
function jsonMappedEvent(mapping: MqttJsonMapping, document: unknown, topic: string): GenericEvent | string {
  const word = scalarText(pointerValue(document, mapping.action));
  if (word === null) return `no action value at ${mapping.action}`;
  const key = mapping.key === undefined ? topic : scalarText(pointerValue(document, mapping.key));
  if (key === null) return `no key at ${mapping.key}`;
  if (listed(mapping.resolve_values, word)) return {alert_id: key, action: "resolve"};
  if (listed(mapping.heartbeat_values, word)) return {alert_id: key, action: "heartbeat"};
  if (!listed(mapping.fire_values, word)) return `action value "${word}" at ${mapping.action} is not a listed value`;
  const title = (mapping.title === undefined ? null : scalarText(pointerValue(document, mapping.title))) ?? topic;
  const severity = mapping.priority === undefined ? null : scalarText(pointerValue(document, mapping.priority));
  return {
    alert_id: key,
    action: "fire",
    title: title.length <= TITLE_MAX ? title : title.slice(0, TITLE_MAX - 1) + "…",
    // A device's own words for severity vary: one Klaxon does not know means the integration's default.
    ...(severity && priorityOfSeverity(severity) ? {severity} : {})
  };
}

function parseJson(text: string): {document: unknown} | {error: string} {
  try {
    return {document: JSON.parse(text) as unknown};
  } catch (error) {
    return {error: (error as Error).message};
  }
}

/**
 * What one MQTT message asks for, in order: a heartbeat topic pings its heartbeat; a JSON
 * payload that is a generic event is that event; a JSON payload through the integration's
 * pointers; then the text rules on the topic and the payload. Pure. Throws `invalid` for what
 * the HTTP route would refuse too (a heartbeat key that is not a heartbeat name, an unknown
 * severity in a generic event).
 */
export function mqttActions(
  integration: MqttIntegration,
  topic: string,
  payload: string,
  matcher: RegexMatcher
): MqttMapping {
  const heartbeat = (integration.heartbeat_topics ?? []).find((entry) => topicMatches(entry.topic, topic));
  if (heartbeat)
    return {
      actions: [
        actionFromGenericEvent(
          {alert_id: heartbeat.name, action: "heartbeat", period_seconds: heartbeat.period_seconds},
          integration.default_priority
        )
      ],
      note: null
    };
  const notes: string[] = [];
  const parsed = parseJson(payload);
  if ("document" in parsed) {
    const generic = genericEventActions(parsed.document, integration);
    if (generic) return {actions: generic, note: null};
    if (integration.json) {
      const mapped = jsonMappedEvent(integration.json, parsed.document, topic);
      if (typeof mapped !== "string")
        return {actions: [actionFromGenericEvent(mapped, integration.default_priority)], note: null};
      notes.push(mapped);
    }
  } else if (integration.json) {
    notes.push(`not JSON: ${parsed.error}`);
  }
  const {actions, timedOut} = textRuleActions(
    integration,
    {fields: {topic, payload}, title: topic, text: payload},
    matcher
  );
  if (actions.length) return {actions, note: null};
  if (timedOut.length) notes.push(`rules ${timedOut.join(", ")} ran out of time`);
  notes.push(integration.rules?.length ? "no rule matched" : "no mapping matched");
  return {actions: [], note: notes.join("; ")};
}

/** One message for the mapping worker: its integration (by id in the batch), the topic and the payload as text. */
export interface MqttMappingItem {
  id: number;
  integrationId: string;
  topic: string;
  payload: string;
}

/** Messages handed to the mapping worker at once, with the integrations they name (as stored, no password). */
export interface MqttMappingWork {
  integrations: Record<string, MqttIntegration>;
  items: MqttMappingItem[];
}

/** One message's mapping, or why it is invalid (what the HTTP route would refuse). */
export type MqttMappingResult = {id: number; mapping: MqttMapping} | {id: number; invalid: string};

/** The mapping worker's answer to one batch, in its order. */
export interface MqttMappingEvent {
  results: MqttMappingResult[];
}
