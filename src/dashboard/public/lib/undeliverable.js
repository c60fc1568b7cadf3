import {fill, h} from "./dom.js";

// Alerts that cannot reach anyone must be impossible to miss, whatever page is open.
const REFRESH_MS = 10_000;

/** /readyz without a key; it answers 503 with the same body when not ready. */
export async function readiness() {
  const response = await fetch("/readyz", {headers: {Accept: "application/json"}});
  return response.json();
}

/**
 * The count and, for each reason, the fix: "3 alerts cannot reach anyone: SMTP is not configured (…)"
 * while none of them has paged anyone; once someone was reached, what actually waits ("1 alert
 * waits for its voice_call step: the modem is not responding"), as the gateway's log says it.
 */
export function undeliverableText({count, reasons}) {
  if (reasons.every((entry) => !entry.reached)) {
    const fixes = [...new Set(reasons.map((entry) => entry.reason))];
    return `${count} alert${count === 1 ? "" : "s"} cannot reach anyone: ${fixes.join("; ")}`;
  }
  return reasons.map(waitingText).join("; ");
}

function waitingText({channel, reason, notifications, reached}) {
  const one = notifications === 1;
  if (!reached) return `${notifications} alert${one ? "" : "s"} cannot reach anyone: ${reason}`;
  const waits = `${notifications} alert${one ? " waits" : "s wait"}`;
  return channel === null ? `${waits}: ${reason}` : `${waits} for ${one ? "its" : "their"} ${channel} step: ${reason}`;
}

/** Keeps the red banner in step with /readyz; returns the function that stops it. */
export function watchUndeliverable(banner) {
  async function refresh() {
    let undeliverable;
    try {
      undeliverable = (await readiness()).undeliverable;
    } catch {
      return; // The page itself says when the gateway does not answer.
    }
    const text = undeliverable?.count > 0 ? undeliverableText(undeliverable) : "";
    banner.hidden = text === "";
    // Refilled only when it changes: the banner is an alert region, read out on every change.
    if (text && banner.dataset.text !== text)
      fill(banner, h("strong", {}, text), " ", h("a", {href: "#/status"}, "Gateway status"));
    banner.dataset.text = text;
  }
  void refresh();
  const timer = setInterval(() => {
    if (document.visibilityState === "visible") void refresh();
  }, REFRESH_MS);
  return () => clearInterval(timer);
}
