import type {Priority} from "../../../domain/vocabulary.js";
import {HEARTBEAT_NAME} from "../../../domain/heartbeat.js";
import {matchRules, RULE_ACTIONS, type RegexMatcher, type RuleField} from "../../../domain/integration-rules.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import {invalid} from "../../shared/errors.js";

/** The generic integration's event (CONTRACT section 8), as validated by its schema. */
export interface GenericEvent {
  alert_id: string;
  action: "fire" | "resolve" | "heartbeat";
  title?: string;
  message?: string;
  severity?: string;
  source?: string;
  link?: string;
  period_seconds?: number;
}

/** One alert of Prometheus Alertmanager's webhook body (version 4). */
export interface AlertmanagerAlert {
  status: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  generatorURL?: string;
  fingerprint: string;
}

/** Alertmanager's webhook body; fields Klaxon does not use are accepted and ignored. */
export interface AlertmanagerPayload {
  version: string;
  alerts: AlertmanagerAlert[];
}

/** What an inbound event asks for, whatever format it arrived in. */
export type InboundAction =
  | {
      action: "fire";
      alert_id: string;
      message: string;
      priority: Priority;
      source: string | null;
      link: string | null;
      service: string | null;
      environment: string | null;
    }
  | {action: "resolve"; alert_id: string}
  | {action: "heartbeat"; alert_id: string; period_seconds?: number};

const MESSAGE_MAX = 4000;
const HTTP_URL = /^https?:\/\/\S+$/;
const LINK_MAX = 2048;
const LABEL_MAX = 128;

/**
 * Severity words senders use, mapped to Klaxon's priorities. Prometheus rules usually label
 * `critical`/`warning`/`info`; other tools say `error`, `page`, `P1`... Case is ignored.
 */
const SEVERITY_WORDS: Record<Priority, string[]> = {
  critical: ["critical", "crit", "fatal", "emergency", "emerg", "alert", "page", "disaster", "p1", "sev1"],
  high: ["high", "error", "err", "major", "p2", "sev2"],
  medium: ["medium", "warning", "warn", "minor", "average", "p3", "sev3"],
  low: ["low", "notice", "p4", "sev4"],
  info: ["info", "informational", "information", "debug", "none", "ok", "p5", "sev5"]
};

const SEVERITY_TO_PRIORITY = new Map<string, Priority>(
  Object.entries(SEVERITY_WORDS).flatMap(([priority, words]) =>
    words.map((word) => [word, priority as Priority] as const)
  )
);

/** Every severity word understood, for documentation and error messages. */
const KNOWN_SEVERITIES = [...SEVERITY_TO_PRIORITY.keys()];

/** The priority a severity word means, or null for a word not in the table. */
export function priorityOfSeverity(severity: string): Priority | null {
  return SEVERITY_TO_PRIORITY.get(severity.trim().toLowerCase()) ?? null;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

/** The generic event as an action; refuses what its schema cannot (unknown severity, nothing to say). */
export function actionFromGenericEvent(event: GenericEvent, defaultPriority: Priority): InboundAction {
  if (event.action === "resolve") return {action: "resolve", alert_id: event.alert_id};
  if (event.action === "heartbeat") {
    if (!HEARTBEAT_NAME.test(event.alert_id))
      throw invalid([
        {
          pointer: "/alert_id",
          detail: `a heartbeat's alert_id is its name: lowercase letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64`
        }
      ]);
    return {action: "heartbeat", alert_id: event.alert_id, period_seconds: event.period_seconds};
  }
  const title = event.title?.trim() ?? "";
  const message = event.message?.trim() ?? "";
  if (!title && !message) throw invalid([{pointer: "/title", detail: "a fire event needs a title or a message"}]);
  let priority = defaultPriority;
  if (event.severity !== undefined) {
    const mapped = priorityOfSeverity(event.severity);
    if (!mapped)
      throw invalid([
        {
          pointer: "/severity",
          detail: `unknown severity "${event.severity}"; use one of: ${KNOWN_SEVERITIES.join(", ")}`
        }
      ]);
    priority = mapped;
  }
  return {
    action: "fire",
    alert_id: event.alert_id,
    message: clip(title && message ? `${title}: ${message}` : title || message, MESSAGE_MAX),
    priority,
    source: event.source ?? null,
    link: event.link ?? null,
    service: null,
    environment: null
  };
}

function alertmanagerMessage(alert: AlertmanagerAlert): string {
  const name = alert.labels?.alertname?.trim();
  const text = (alert.annotations?.summary ?? alert.annotations?.description ?? "").trim();
  if (name && text) return text.includes(name) ? text : `${name}: ${text}`;
  return text || name || `Alertmanager alert ${alert.fingerprint}`;
}

function optionalLabel(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? clip(trimmed, LABEL_MAX) : null;
}

/**
 * Alertmanager's grouped alerts as actions: each alert's fingerprint is its key; `firing` fires,
 * `resolved` resolves. labels.severity maps through the severity table (unknown or missing: the
 * integration's default priority); the summary annotation (else description, else the alert's
 * name) is the message; generatorURL is the link; labels service/job and environment/env fill
 * those fields.
 */
export function actionsFromAlertmanager(payload: AlertmanagerPayload, defaultPriority: Priority): InboundAction[] {
  return payload.alerts.map((alert): InboundAction => {
    if (alert.status === "resolved") return {action: "resolve", alert_id: alert.fingerprint};
    const labels = alert.labels ?? {};
    const link =
      alert.generatorURL && HTTP_URL.test(alert.generatorURL) && alert.generatorURL.length <= LINK_MAX
        ? alert.generatorURL
        : null;
    return {
      action: "fire",
      alert_id: alert.fingerprint,
      message: clip(alertmanagerMessage(alert), MESSAGE_MAX),
      priority: (labels.severity && priorityOfSeverity(labels.severity)) || defaultPriority,
      source: null,
      link,
      service: optionalLabel(labels.service ?? labels.job),
      environment: optionalLabel(labels.environment ?? labels.env)
    };
  });
}

/** The generic event's text fields and their length limits (GenericEventModel's, which the HTTP route checks). */
const GENERIC_TEXT_LIMITS = {title: 200, message: 3500, severity: 32, source: 128, link: LINK_MAX} as const;
const ALERT_ID_MAX = 200;
const PERIOD_SECONDS = {min: 10, max: 366 * 86_400};

function isGenericEvent(value: unknown): value is GenericEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const event = value as Record<string, unknown>;
  const {alert_id: alertId, action, period_seconds: period} = event;
  if (typeof alertId !== "string" || !/\S/.test(alertId) || alertId.length > ALERT_ID_MAX) return false;
  if (!(RULE_ACTIONS as readonly unknown[]).includes(action)) return false;
  const textsFit = Object.entries(GENERIC_TEXT_LIMITS).every(
    ([field, max]) => event[field] === undefined || (typeof event[field] === "string" && event[field].length <= max)
  );
  const linkFits = event.link === undefined || HTTP_URL.test(event.link as string);
  const periodFits =
    period === undefined ||
    (Number.isInteger(period) && (period as number) >= PERIOD_SECONDS.min && (period as number) <= PERIOD_SECONDS.max);
  return textsFit && linkFits && periodFits;
}

/**
 * A device message (mail body, MQTT payload) that is a generic event needs no rules: its
 * actions, or null when the value is not one (a field of the wrong type or too long included;
 * unknown fields are ignored, as devices add their own). Throws `invalid` for an event the HTTP
 * route would refuse too: an unknown severity, a fire with neither title nor message, a
 * heartbeat whose alert_id is not a heartbeat name.
 */
export function genericEventActions(value: unknown, integration: IntegrationRecord): InboundAction[] | null {
  if (!isGenericEvent(value)) return null;
  const {alert_id, action, title, message, severity, source, link, period_seconds} = value;
  const event: GenericEvent = {alert_id, action, title, message, severity, source, link, period_seconds};
  return [actionFromGenericEvent(event, integration.default_priority)];
}

/** A text message's fields for the rules, and the title and text its alert shows when the rule names no title. */
export interface TextMessage {
  fields: Partial<Record<RuleField, string>>;
  title: string;
  text: string;
}

/**
 * A text message through its integration's rules: the first matching rule's action, none when
 * no rule matches (the message is kept in the integration's log). `timedOut` lists the rules
 * whose regex ran out of time. Throws `invalid` as genericEventActions does (a heartbeat key
 * that is not a heartbeat name).
 */
export function textRuleActions(
  integration: IntegrationRecord,
  message: TextMessage,
  matcher: RegexMatcher
): {actions: InboundAction[]; timedOut: number[]} {
  const {match, timedOut} = matchRules(integration.rules ?? [], message.fields, matcher);
  if (!match) return {actions: [], timedOut};
  const event: GenericEvent = {
    alert_id: match.alertKey,
    action: match.rule.action,
    title: clip(match.title ?? message.title, GENERIC_TEXT_LIMITS.title),
    message: clip(message.text, MESSAGE_MAX)
  };
  return {actions: [actionFromGenericEvent(event, match.rule.priority ?? integration.default_priority)], timedOut};
}
