/**
 * When a failed webhook delivery is tried again. Pure: the caller passes the time and the random
 * source, so a schedule can be checked exactly.
 */

// About 10 s, 1 min, 5 min, 30 min, then hourly (CONTRACT section 7).
const BACKOFF_MS = [10_000, 60_000, 300_000, 1_800_000];
const HOURLY_MS = 3_600_000;
const JITTER = 0.1;
/** The box may be offline for days; past this a delivery is given up and recorded as failed. */
export const GIVE_UP_AFTER_MS = 72 * 3_600_000;

/** The pause after failed attempt number `attempt` (1-based), with ±10% jitter so many retries do not arrive in step. */
export function backoffMs(attempt: number, random: () => number): number {
  const base = BACKOFF_MS[attempt - 1] ?? HOURLY_MS;
  return Math.round(base * (1 + (random() * 2 - 1) * JITTER));
}

/** A Retry-After value (delta seconds or an HTTP date) as milliseconds from `nowMs`; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * The next attempt's time, or null to give up. A receiver's Retry-After is honoured by never
 * coming back sooner than it asked; our own backoff still applies when it asks for less.
 */
export function nextAttemptAt(options: {
  attempt: number;
  nowMs: number;
  createdMs: number;
  retryAfterMs: number | null;
  random: () => number;
}): number | null {
  const delay = Math.max(backoffMs(options.attempt, options.random), options.retryAfterMs ?? 0);
  const at = options.nowMs + delay;
  return at > options.createdMs + GIVE_UP_AFTER_MS ? null : at;
}
