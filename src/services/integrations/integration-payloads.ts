import type {Priority} from "../../domain/vocabulary.js";
import {HEARTBEAT_NAME} from "../../domain/heartbeat.js";
import {invalid} from "../shared/errors.js";

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
