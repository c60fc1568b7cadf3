/** An alert the gateway answered with a 2xx: from then on it must never be lost. */
export interface AnsweredSend {
  id: string;
  target: string;
  /** The Idempotency-Key and the exact body bytes it was sent with, when it had one. */
  idempotency: {key: string; body: string} | null;
}

export type ClosedAs = "acknowledged" | "resolved";

/**
 * Everything the gateway has confirmed over the whole run, every cycle added to it. An operation
 * sent but never answered (cut off by the kill) is "in doubt": it may or may not have committed,
 * so the checks leave that subject alone rather than guess.
 */
export interface Ledger {
  sends: Map<string, AnsweredSend>;
  /** Answered ids in answer order, so the closer can pick recent (still escalating) ones. */
  sendOrder: string[];
  closed: Map<string, ClosedAs>;
  closeInDoubt: Set<string>;
  /** Recipients created during the load, by uuid: present until an answered delete. */
  recipients: Map<string, "present" | "deleted">;
  /** API keys created during the load, by public id, with the whole key to sign in with. */
  keys: Map<string, {key: string; state: "active" | "revoked"}>;
  adminInDoubt: Set<string>;
  /** Answers that broke the contract while the load ran (a replay with another id, an unexpected status). */
  anomalies: string[];
}

export function emptyLedger(): Ledger {
  return {
    sends: new Map(),
    sendOrder: [],
    closed: new Map(),
    closeInDoubt: new Set(),
    recipients: new Map(),
    keys: new Map(),
    adminInDoubt: new Set(),
    anomalies: []
  };
}

/** The subjects whose last answered state can be checked: in-doubt ones are left out. */
export function settled<T>(entries: Map<string, T>, inDoubt: Set<string>): Array<[string, T]> {
  return [...entries].filter(([id]) => !inDoubt.has(id));
}
