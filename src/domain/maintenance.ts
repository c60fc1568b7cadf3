import type {Actor} from "./actor.js";

/** What a maintenance window silences; an alert matching any one list is covered. */
export interface MaintenanceScope {
  /** Recipient, group or schedule uuids: alerts sent to them. */
  targets: string[];
  /** Alert sources, compared exactly (`source` of a send, an integration's name or its alerts' own source). */
  sources: string[];
  /** Integration ids: every alert that came in through them. */
  integrations: string[];
  /** Heartbeat names: their down pages. */
  heartbeats: string[];
}

/** A planned time during which matching alerts are recorded but page nobody. Instants are ISO 8601 UTC strings. */
export interface MaintenanceWindow extends MaintenanceScope {
  uuid: string;
  starts_at: string;
  ends_at: string;
  reason: string;
  created_at: string;
  created_by: Actor;
  /** When the window's held alerts were released (its end was handled), or null while that is still to do. */
  released_at: string | null;
}

export const MAINTENANCE_STATUSES = ["upcoming", "active", "ended"] as const;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number];

/** A window covers [starts_at, ends_at): at its end instant it has already ended. */
export function windowStatus(
  window: Pick<MaintenanceWindow, "starts_at" | "ends_at">,
  nowMs: number
): MaintenanceStatus {
  if (nowMs < Date.parse(window.starts_at)) return "upcoming";
  return nowMs < Date.parse(window.ends_at) ? "active" : "ended";
}

/** Where an alert came from, as far as maintenance windows care. */
export interface AlertOrigin {
  target: string;
  source: string | null;
  /** The integration it came in through, or null. */
  integration: string | null;
  /** The heartbeat whose down page it is, or null. */
  heartbeat: string | null;
}

export function covers(scope: MaintenanceScope, origin: AlertOrigin): boolean {
  return (
    scope.targets.includes(origin.target) ||
    (origin.source !== null && scope.sources.includes(origin.source)) ||
    (origin.integration !== null && scope.integrations.includes(origin.integration)) ||
    (origin.heartbeat !== null && scope.heartbeats.includes(origin.heartbeat))
  );
}

/** The active window covering the alert that ends last (the one that holds it longest), or null. */
export function coveringWindow<W extends MaintenanceWindow>(
  windows: readonly W[],
  origin: AlertOrigin,
  nowMs: number
): W | null {
  let found: W | null = null;
  for (const window of windows) {
    if (windowStatus(window, nowMs) !== "active" || !covers(window, origin)) continue;
    if (!found || window.ends_at > found.ends_at) found = window;
  }
  return found;
}

/**
 * Whether a held alert is released when its window ends: one with a later "resolved" (an
 * integration's alert, a heartbeat's down page) may still be firing and pages then; a direct
 * send is a one-shot message about the planned shutdown and stays suppressed.
 */
export function releasable(origin: Pick<AlertOrigin, "integration" | "heartbeat">): boolean {
  return origin.integration !== null || origin.heartbeat !== null;
}
