import type {AlertSummary} from "../channel.js";
import {andMore, byUrgency, MAX_LISTED_ALERTS} from "../storm-listing.js";
import {html, type SafeHtml} from "../../lib/html.js";
import {formatTime} from "../../lib/clock.js";

/** The parts of one alert email, ready for the transport. */
export interface EmailMessage {
  subject: string;
  text: string;
  /** Null in the short form. */
  html: string | null;
}

export interface EmailContent {
  recipientName: string;
  alerts: AlertSummary[];
  /**
   * The acknowledge link, or null with the reason it is missing (said in the mail); null itself
   * for a test page, which has nothing to acknowledge.
   */
  ack: {url: string; validUntilMs: number; covers?: number} | {url: null; missingBecause: string} | null;
  /** The dashboard's list of the person's alerts, where a storm's page sends them for the alerts it does not list. */
  moreLink?: string | null;
  /** The zone the person reads times in (the delivery's); absent: the box's. */
  timeZone?: string;
}

/**
 * `long`: up to MAX_LISTED_ALERTS alerts in full, plain text and HTML. `short`: plain text only,
 * one line for each of the first SHORT_LISTED_ALERTS: what is sent when a server refuses the long
 * form for its size, so the page still goes out.
 */
export type EmailForm = "long" | "short";

const SHORT_LISTED_ALERTS = 10;

const SUBJECT_MESSAGE_CHARS = 120;
const NOTHING_TO_ACKNOWLEDGE = "This is a test page: there is nothing to acknowledge.";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const PRIORITY_COLOURS: Record<string, string> = {
  critical: "#b00020",
  high: "#c75000",
  medium: "#8a6d00",
  low: "#2e6b30",
  info: "#35608f"
};

// Ids are ULID-like: their first 10 characters are the creation time in milliseconds, and the
// alert summary a driver gets carries no other timestamp.
export function createdAtOf(notificationId: string): Date | null {
  const token = notificationId.slice(notificationId.indexOf("_") + 1, notificationId.indexOf("_") + 11);
  let ms = 0;
  for (const char of token) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) return null;
    ms = ms * 32 + digit;
  }
  return token.length === 10 ? new Date(ms) : null;
}

// A subject is one line; message text may hold anything.
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function headline(alert: AlertSummary): string {
  return `[${alert.priority.toUpperCase()}] ${alert.source ? `${oneLine(alert.source, 60)}: ` : ""}${oneLine(alert.message, SUBJECT_MESSAGE_CHARS)}`;
}

export function subjectOf(recipientName: string, alerts: AlertSummary[]): string {
  const [first, ...others] = byUrgency(alerts);
  if (others.length === 0) return headline(first);
  return `${alerts.length} alerts for ${oneLine(recipientName, 60)}: ${headline(first)} and ${others.length} more`;
}

function isWebLink(link: string | null): link is string {
  return link !== null && /^https?:\/\//i.test(link);
}

/** The alerts a page lists, most urgent first: all of them unless it is a storm's. */
export function listedAlerts(alerts: AlertSummary[], form: EmailForm = "long"): AlertSummary[] {
  return byUrgency(alerts).slice(0, form === "long" ? MAX_LISTED_ALERTS : SHORT_LISTED_ALERTS);
}

// What the Acknowledge link covers: every alert, or (a storm too big for one link) the most urgent.
function ackScope(content: EmailContent): string {
  const total = content.alerts.length;
  const covers = ackCovers(content);
  if (total === 1) return "it";
  return covers >= total ? `all ${total}` : `the ${covers} most urgent`;
}

function ackCovers(content: EmailContent): number {
  const total = content.alerts.length;
  return Math.min(total, content.ack?.url ? (content.ack.covers ?? total) : total);
}

// "and 650 more alerts: <link>", the line that stands for what a storm's page does not list.
function moreLine(content: EmailContent, listed: number): string | null {
  const rest = content.alerts.length - listed;
  if (rest <= 0) return null;
  return content.moreLink
    ? `${andMore(rest)}: ${content.moreLink}`
    : `${andMore(rest)}: see them all in Klaxon's dashboard`;
}

function textOf(content: EmailContent, alerts: AlertSummary[], form: EmailForm): string {
  const lines = [
    content.alerts.length === 1
      ? `Klaxon alert for ${content.recipientName}`
      : `${content.alerts.length} Klaxon alerts for ${content.recipientName}`,
    ""
  ];
  for (const alert of alerts) {
    if (form === "short") {
      lines.push(`${headline(alert)} (${alert.notification_id})`);
      continue;
    }
    lines.push(`[${alert.priority.toUpperCase()}] ${alert.message}`);
    if (alert.source) lines.push(`  Source:  ${alert.source}`);
    lines.push(`  Raised:  ${formatTime(createdAtOf(alert.notification_id), content.timeZone)}`);
    if (alert.link) lines.push(`  Link:    ${alert.link}`);
    lines.push(`  Id:      ${alert.notification_id}`, "");
  }
  if (form === "short") lines.push("");
  const more = moreLine(content, alerts.length);
  if (more) lines.push(more, "");
  if (content.ack === null) {
    lines.push(NOTHING_TO_ACKNOWLEDGE);
  } else if (content.ack.url !== null) {
    lines.push(`Acknowledge ${ackScope(content)} (this stops the escalation):`, content.ack.url, "");
    // The short form lists 10: the reader must know the link also takes alerts it does not show.
    const unlisted = ackCovers(content) - alerts.length;
    if (unlisted > 0) lines.push(`The link also acknowledges the ${unlisted} alerts not listed here.`);
    lines.push(
      `The link opens a confirmation page: nothing is acknowledged until you press its button. It works until ${formatTime(new Date(content.ack.validUntilMs), content.timeZone)}.`
    );
  } else {
    lines.push(
      `This email has no acknowledge link (${content.ack.missingBecause}). Acknowledge in the dashboard, or with: klaxon ack <id>`
    );
  }
  lines.push("", "-- ", "Klaxon alert escalation");
  return lines.join("\n");
}

function alertBlock(alert: AlertSummary, timeZone?: string): SafeHtml {
  const colour = PRIORITY_COLOURS[alert.priority] ?? "#333333";
  return html`<tr><td style="padding:12px 0;border-bottom:1px solid #dddddd">
<p style="margin:0 0 6px 0"><span style="display:inline-block;padding:2px 8px;border-radius:3px;background:${colour};color:#ffffff;font-weight:bold;font-size:12px">${alert.priority.toUpperCase()}</span>
${alert.source ? html` <strong>${alert.source}</strong>` : ""}</p>
<p style="margin:0 0 6px 0;font-size:16px;white-space:pre-wrap">${alert.message}</p>
<p style="margin:0;color:#555555;font-size:13px">Raised ${formatTime(createdAtOf(alert.notification_id), timeZone)} · ${alert.notification_id}${
    isWebLink(alert.link) ? html` · <a href="${alert.link}" rel="noreferrer">open in the source system</a>` : ""
  }</p>
</td></tr>`;
}

function moreHtml(content: EmailContent, listed: number): SafeHtml | string {
  const rest = content.alerts.length - listed;
  if (rest <= 0) return "";
  return content.moreLink
    ? html`<p style="margin:12px 0 0 0;font-size:15px"><a href="${content.moreLink}">${andMore(rest)}: see them all in the dashboard</a></p>`
    : html`<p style="margin:12px 0 0 0;font-size:15px">${andMore(rest)}: see them all in Klaxon's dashboard</p>`;
}

function htmlOf(content: EmailContent, alerts: AlertSummary[]): string {
  const total = content.alerts.length;
  const title =
    total === 1 ? `Klaxon alert for ${content.recipientName}` : `${total} Klaxon alerts for ${content.recipientName}`;
  const ackAll = total > 1 ? ` ${ackScope(content)}` : "";
  const ack =
    content.ack === null
      ? html`<p style="margin:20px 0 0 0;color:#555555;font-size:13px">${NOTHING_TO_ACKNOWLEDGE}</p>`
      : content.ack.url !== null
        ? html`<p style="margin:20px 0 8px 0"><a href="${content.ack.url}" style="display:inline-block;padding:10px 18px;background:#1a56db;color:#ffffff;text-decoration:none;border-radius:4px;font-weight:bold">Acknowledge${ackAll}</a></p>
<p style="margin:0;color:#555555;font-size:13px">Acknowledging stops the escalation. The link opens a confirmation page: nothing is acknowledged until you press its button. It works until ${formatTime(new Date(content.ack.validUntilMs), content.timeZone)}.</p>`
        : html`<p style="margin:20px 0 0 0;color:#555555;font-size:13px">This email has no acknowledge link (${content.ack.missingBecause}). Acknowledge in the dashboard, or with <code>klaxon ack &lt;id&gt;</code>.</p>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>
<body style="margin:0;padding:16px;font-family:Arial,Helvetica,sans-serif;color:#1a1a1a;background:#ffffff">
<h1 style="font-size:18px;margin:0 0 8px 0">${title}</h1>
<table role="presentation" style="width:100%;max-width:640px;border-collapse:collapse">${alerts.map((alert) => alertBlock(alert, content.timeZone))}</table>
${moreHtml(content, alerts.length)}
${ack}
</body></html>`.value;
}

/**
 * Subject, plain text and HTML (none in the short form) for one delivery. Every value from an
 * alert is escaped in the HTML. Bounded whatever the storm: at most MAX_LISTED_ALERTS alerts.
 */
export function composeEmail(content: EmailContent, form: EmailForm = "long"): EmailMessage {
  const alerts = listedAlerts(content.alerts, form);
  return {
    subject: subjectOf(content.recipientName, content.alerts),
    text: textOf(content, alerts, form),
    html: form === "long" ? htmlOf(content, alerts) : null
  };
}
