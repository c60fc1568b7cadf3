import type {WaitingSms} from "../../store/journal/inbound-sms.repository.js";

/** A whole incoming message, ready for the command handler, and the journal rows it came from. */
export interface AssembledSms {
  ids: number[];
  sender: string;
  text: string;
  /** When the (first part's) service centre took it; when Klaxon read it if the modem did not say. */
  receivedAt: string;
}

/**
 * Joins the parts of concatenated messages (same sender, reference and total) in sequence order.
 * A message is ready when it has every part, or when its oldest part has waited `partsWaitMs`
 * (a part the network lost must not hold the rest for ever: what arrived is handed on). A part
 * that came twice counts once. Single messages are ready at once. Oldest first.
 */
export function assembleMessages(waiting: readonly WaitingSms[], nowMs: number, partsWaitMs: number): AssembledSms[] {
  const groups = new Map<string, WaitingSms[]>();
  for (const sms of waiting) {
    const key = sms.part ? `${sms.sender}\u0000${sms.part.reference}\u0000${sms.part.total}` : `single\u0000${sms.id}`;
    groups.set(key, [...(groups.get(key) ?? []), sms]);
  }
  const ready: AssembledSms[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    const bySequence = new Map<number, WaitingSms>();
    for (const sms of group) if (!bySequence.has(sms.part?.sequence ?? 1)) bySequence.set(sms.part?.sequence ?? 1, sms);
    const complete = bySequence.size >= (first.part?.total ?? 1);
    if (!complete && Date.parse(first.storedAt) + partsWaitMs > nowMs) continue;
    const ordered = [...bySequence.entries()].sort((a, b) => a[0] - b[0]).map(([, sms]) => sms);
    ready.push({
      ids: group.map((sms) => sms.id),
      sender: first.sender,
      text: ordered.map((sms) => sms.body).join(""),
      receivedAt: ordered[0].sentAt ?? ordered[0].storedAt
    });
  }
  return ready.sort((a, b) => a.ids[0] - b.ids[0]);
}
