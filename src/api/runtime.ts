import type {Settings} from "../settings/defaults.js";
import type {Logger} from "../lib/logger.js";
import type {Clock} from "../lib/clock.js";
import type {RateDecision, RateLimiter} from "../lib/rate-limiter.js";
import {AppError} from "../services/shared/errors.js";

/** Where a refusal's headers go: the raw response, set before the problem is written. */
export type HeaderSink = {setHeader(name: string, value: string): unknown};

// Unauthenticated answers have no key to count against: they show the address's failure budget.
const AUTH_FAILURE_POLICY = "failed-auth-per-address";

/** Process-wide things the HTTP edge needs, handed to Ts.ED as one injectable value. */
export class Runtime {
  constructor(
    readonly settings: Settings,
    readonly logger: Logger,
    readonly clock: Clock,
    /** Requests per API key. */
    readonly keyLimiter: RateLimiter,
    /** Failed authentications per client address (brute force on keys). */
    readonly authFailureLimiter: RateLimiter
  ) {}

  /**
   * The client's address, once it is known not to be over its budget of failed authentications:
   * guessing keys, signatures and ping tokens all spend the same budget, so none can be guessed.
   */
  admitAddress(request: {socket: {remoteAddress?: string}}, response: HeaderSink): string {
    const address = request.socket.remoteAddress ?? "unknown";
    if (this.authFailureLimiter.exhausted(address)) {
      const decision = this.authFailureLimiter.take(address);
      this.showAuthFailureBudget(response, decision);
      throw new AppError("rate_limited", "too many failed authentications from this address", {
        retryAfterSeconds: decision.resetSeconds
      });
    }
    return address;
  }

  /** Spends one of the address's failed authentications; the refusal shows what is left (CONTRACT 9: every answer carries RateLimit). */
  authenticationFailed(address: string, response: HeaderSink): void {
    this.showAuthFailureBudget(response, this.authFailureLimiter.take(address));
  }

  private showAuthFailureBudget(response: HeaderSink, decision: RateDecision): void {
    response.setHeader("RateLimit-Policy", this.authFailureLimiter.policyHeader(AUTH_FAILURE_POLICY));
    response.setHeader("RateLimit", this.authFailureLimiter.rateLimitHeader(AUTH_FAILURE_POLICY, decision));
  }
}
