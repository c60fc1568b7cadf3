import type {Readiness} from "./readiness.service.js";

/**
 * What /readyz tells anyone without a key: the status, why it is unready in words, each channel's
 * state with its reason, the undeliverable alerts by channel, and counts. Never an address, a
 * path, a broker URL, a schedule's or a box's name: those are on /readyz with a key.
 */
export interface PublicReadiness {
  status: "ready" | "unready";
  ready: boolean;
  /** Why the gateway is unready, one short sentence each; empty when ready. */
  reasons: string[];
  journal: {can_commit: boolean};
  channels: Array<{channel: Readiness["channels"][number]["channel"]; available: boolean; reason: string | null}>;
  undeliverable: Readiness["undeliverable"];
  counts: ReadinessCounts;
}

export interface ReadinessCounts {
  outbox_pending: number;
  throttled_addresses: number;
  schedule_gaps: number;
  mqtt_brokers: number;
  mqtt_brokers_down: number;
  plc_links: number;
  plc_links_unreachable: number;
  /** Integrations set to keep unmapped messages that kept some in the last 24 hours (nobody paged). */
  unmapped_kept: number;
}

export function publicReadiness(readiness: Readiness): PublicReadiness {
  return {
    status: readiness.ready ? "ready" : "unready",
    ready: readiness.ready,
    reasons: unreadyReasons(readiness),
    journal: {can_commit: readiness.journal.can_commit},
    channels: readiness.channels.map(({channel, available, reason}) => ({channel, available, reason})),
    undeliverable: readiness.undeliverable,
    counts: readinessCounts(readiness)
  };
}

export function readinessCounts(readiness: Readiness): ReadinessCounts {
  return {
    outbox_pending: readiness.outbox.pending,
    throttled_addresses: readiness.throttled_addresses.length,
    schedule_gaps: readiness.schedule_gaps.length,
    mqtt_brokers: readiness.mqtt_brokers.length,
    mqtt_brokers_down: readiness.mqtt_brokers.filter((broker) => !broker.connected).length,
    plc_links: readiness.plc_links.length,
    plc_links_unreachable: readiness.plc_links.filter((link) => link.state === "unreachable").length,
    unmapped_kept: readiness.unmapped_kept.length
  };
}

// Words of our own, never an error's message (which may name the data path).
export function unreadyReasons(readiness: Readiness): string[] {
  const reasons: string[] = [];
  // Damage is one reason that stays (a latch), whatever else it stops.
  if (readiness.journal.damaged) reasons.push("the journal is damaged: stop the gateway and restore a backup");
  else if (!readiness.journal.can_commit) reasons.push("the journal cannot commit");
  const {count} = readiness.undeliverable;
  if (count > 0)
    // Not "cannot reach anyone": an alert that waits for its next step may have paged someone already.
    reasons.push(`${count} open alert${count === 1 ? " is" : "s are"} undeliverable now (see undeliverable)`);
  if (count < 0 && !readiness.journal.damaged) reasons.push("the open alerts cannot be read from the journal");
  if (readiness.heartbeats.last_pass_failed) reasons.push("the heartbeat sweep's last pass failed");
  if (readiness.maintenance.last_pass_failed) reasons.push("the maintenance release sweep's last pass failed");
  if (readiness.auditor.last_pass_failed) reasons.push("the paging auditor's last pass failed");
  // A cause added later that this list does not name yet still says where to look.
  if (!readiness.ready && reasons.length === 0) reasons.push("unready: see /readyz with an API key");
  return reasons;
}
