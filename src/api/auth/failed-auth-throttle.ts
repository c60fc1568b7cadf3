import {createHash} from "node:crypto";
import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {RateDecision, RateLimiter} from "../../lib/rate-limiter.js";

/** The budget a failure was charged to, as the RateLimit headers name it. */
export const ADDRESS_POLICY = "failed-auth-per-address";
export const CREDENTIAL_POLICY = "failed-auth-per-credential";

// "Address throttled" is logged once per address per this interval, however hard it is hammered.
const LOG_INTERVAL_MS = 60_000;
// Failed credentials remembered per (address, credential); the oldest are forgotten past this.
const REMEMBERED_MAX = 10_000;

export interface FailureDecision extends RateDecision {
  policy: typeof ADDRESS_POLICY | typeof CREDENTIAL_POLICY;
}

function digest(credential: string): string {
  return createHash("sha256").update(credential).digest("base64url");
}

/**
 * Failed authentications (wrong or revoked key, rotated ping URL, forged signature), throttled
 * without locking anyone out. It is asked only after a credential has failed: a request with a
 * valid credential never reaches it, so another sender's failures from the same address (NAT,
 * the TLS proxy on the box) cannot refuse it.
 *
 * A credential failing from an address for the first time is a guess and spends the address's
 * budget; once that is spent, new guesses get 429. The same credential failing again (a device
 * still pinging a rotated URL, a script with a revoked key) is no new guess: it spends a budget
 * of its own, so it keeps hearing its clear 401/404 and never exhausts the address for others.
 */
export class FailedAuthThrottle {
  /** (address, credential digest) pairs already charged to their address, oldest first. */
  private readonly charged = new Set<string>();
  /** Addresses that were refused for an empty budget, with when that was last logged. */
  private readonly throttledLoggedAt = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly logger: Logger
  ) {}

  /** Charges one failure of `credential` ("" for none) from `address`; `allowed` false means answer 429. */
  failed(address: string, credential: string): FailureDecision {
    const pair = `${address} ${digest(credential)}`;
    if (this.charged.has(pair)) return {...this.limiter.take(`credential ${pair}`), policy: CREDENTIAL_POLICY};
    const decision = this.limiter.take(`address ${address}`);
    if (decision.allowed) this.remember(pair);
    else this.noteThrottled(address);
    return {...decision, policy: ADDRESS_POLICY};
  }

  /** Addresses whose budget of new failures is spent right now (for /readyz). */
  throttledAddresses(): string[] {
    for (const address of this.throttledLoggedAt.keys())
      if (!this.limiter.exhausted(`address ${address}`)) this.throttledLoggedAt.delete(address);
    return [...this.throttledLoggedAt.keys()];
  }

  private remember(pair: string): void {
    this.charged.add(pair);
    if (this.charged.size > REMEMBERED_MAX) this.charged.delete(this.charged.values().next().value as string);
  }

  private noteThrottled(address: string): void {
    const now = this.clock.now();
    const loggedAt = this.throttledLoggedAt.get(address);
    if (loggedAt !== undefined && now - loggedAt < LOG_INTERVAL_MS) return;
    // Bounded like the limiter: addresses that cooled down are dropped before a new one is added.
    if (loggedAt === undefined && this.throttledLoggedAt.size >= REMEMBERED_MAX) {
      this.throttledAddresses();
      const oldest = this.throttledLoggedAt.keys().next();
      if (!oldest.done && this.throttledLoggedAt.size >= REMEMBERED_MAX) this.throttledLoggedAt.delete(oldest.value);
    }
    this.throttledLoggedAt.set(address, now);
    this.logger.warn("address throttled: too many failed authentications; its new failing credentials get 429", {
      address,
      failures_per_minute: this.limiter.burst
    });
  }
}
