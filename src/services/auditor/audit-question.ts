import type {AuditSuspect} from "../../store/journal/paging-audit.repository.js";

/** Every auditor reason starts so: a reader of /readyz, the banner or a log line knows who found it. */
export const AUDITOR_PREFIX = "paging auditor: ";

/**
 * The auditor's question for one alert nobody closed, held or recorded as waiting for a channel
 * (the runner says those loudly already): null when it was paged or the journal records an allowed
 * reason not yet to (quiet hours that hold its priority, until their end plus the deadline; a
 * maintenance release, counted from then), else the reason it is undeliverable. The reasons are
 * few and fixed, so /readyz and the banner add alerts up by them.
 */
export function auditVerdict(suspect: AuditSuspect, nowMs: number, deadlineSeconds: number): string | null {
  if (suspect.paged) return null;
  const accepted = Date.parse(suspect.created_at);
  if (nowMs < accepted + deadlineSeconds * 1000) return null;
  if (suspect.status === "exhausted")
    return `${AUDITOR_PREFIX}an alert ended (exhausted) without any page carried to anyone`;
  const dueFrom = Math.max(
    accepted,
    suspect.released_at === null ? 0 : Date.parse(suspect.released_at),
    suspect.deferred_until === null ? 0 : Date.parse(suspect.deferred_until)
  );
  if (nowMs < dueFrom + deadlineSeconds * 1000) return null;
  if (!suspect.has_chain) return `${AUDITOR_PREFIX}an alert has no escalation chain, so nobody is paged`;
  if (suspect.grouped)
    return `${AUDITOR_PREFIX}an alert waits behind another alert's page (storm) with no page of its own ${deadlineSeconds} s after acceptance`;
  return `${AUDITOR_PREFIX}no page carried ${deadlineSeconds} s after acceptance, and the journal records no reason to wait`;
}
