import {html, SafeHtml} from "../../lib/html.js";
import {formatTime} from "../../lib/clock.js";
import {
  acknowledgeable,
  type LinkConfirmation,
  type LinkedAlert,
  type LinkedAlerts
} from "../../services/notifications/ack-links.service.js";

// Our own constant, inserted as is: entities are not decoded inside <style>.
const STYLE = new SafeHtml(`
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Arial,sans-serif;color:#1a1a1a;background:#f4f4f4;line-height:1.45}
main{max-width:40rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.4rem;margin:0 0 1rem}
ul{list-style:none;padding:0;margin:0 0 1.25rem}
li{background:#fff;border:1px solid #ccc;border-radius:6px;padding:.75rem 1rem;margin-bottom:.6rem}
.priority{font-weight:700;text-transform:uppercase}
.message{white-space:pre-wrap;margin:.25rem 0;font-size:1.05rem}
.meta{color:#444;font-size:.9rem;margin:0}
.state{font-weight:700}
button{font:inherit;font-size:1.1rem;font-weight:700;padding:.8rem 1.4rem;border:0;border-radius:6px;background:#1a56db;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #000;outline-offset:2px}
.note{color:#444;font-size:.9rem}
`);

function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${title} · Klaxon</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`.value;
}

function stateOf(alert: LinkedAlert, timeZone: string | undefined): string {
  switch (alert.status) {
    case "acknowledged":
      return `acknowledged by ${alert.acknowledged_by ?? "someone"}${alert.acknowledged_via ? ` via ${alert.acknowledged_via}` : ""} at ${formatTime(alert.acknowledged_at ? new Date(alert.acknowledged_at) : null, timeZone)}`;
    case "resolved":
      return "resolved: nothing left to do";
    case "exhausted":
      return "open (the escalation ran out; nobody has acknowledged it)";
    case "suppressed":
      return "held by a maintenance window: nobody is paged";
    default:
      return "open: people are being paged";
  }
}

// Times in the zone the person's email gave them (issue 33).
function alertList({alerts, time_zone}: LinkedAlerts): SafeHtml {
  const timeZone = time_zone ?? undefined;
  return html`<ul>${alerts.map(
    (
      alert
    ) => html`<li><p class="meta"><span class="priority">${alert.priority}</span>${alert.source ? html` · ${alert.source}` : ""} · raised ${formatTime(new Date(alert.created_at), timeZone)}</p>
<p class="message">${alert.message}</p>
<p class="meta">Status: <span class="state">${stateOf(alert, timeZone)}</span></p></li>`
  )}</ul>`;
}

/** What the link will acknowledge, and the button that does it. Showing it changes nothing. */
export function confirmPage(linked: LinkedAlerts): string {
  const open = linked.alerts.filter(acknowledgeable);
  const count = open.length === 1 ? "1 alert" : `${open.length} alerts`;
  const action = open.length
    ? html`<form method="post"><button type="submit">Acknowledge ${count}</button></form>
<p class="note">Acknowledging stops the escalation for everyone; it is recorded as ${linked.recipient.name} &lt;${linked.recipient.email}&gt;, through email.</p>`
    : html`<p><strong>Nothing to acknowledge:</strong> ${linked.alerts.length ? "every alert in this email is already closed." : "the alerts in this email no longer exist."}</p>`;
  return page(
    "Acknowledge alerts",
    html`<h1>${open.length ? `Acknowledge ${count}?` : "Already closed"}</h1>
${alertList(linked)}
${action}`
  );
}

/** After the button: what was acknowledged now, and what had been closed before. */
export function donePage(confirmation: LinkConfirmation): string {
  const now = confirmation.acknowledged_now.length;
  const heading = now ? `Acknowledged ${now === 1 ? "1 alert" : `${now} alerts`}` : "Nothing left to acknowledge";
  const note = now
    ? "The escalation has stopped; nobody else will be paged for these."
    : "Every alert in this email was already closed; nothing changed.";
  return page(
    heading,
    html`<h1 role="status">${heading}</h1>
<p>${note}</p>
${alertList(confirmation)}`
  );
}

/** A link that cannot be used: why, and what to do instead. */
export function errorPage(title: string, detail: string, advice: string): string {
  return page(
    title,
    html`<h1>${title}</h1>
<p>${detail.charAt(0).toUpperCase() + detail.slice(1)}.</p>
<p>${advice}</p>
<p class="note">Nothing was acknowledged.</p>`
  );
}
