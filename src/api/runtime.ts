import type {Settings} from "../settings/defaults.js";
import type {Logger} from "../lib/logger.js";
import type {Clock} from "../lib/clock.js";
import {RateLimiter} from "../lib/rate-limiter.js";
import {AppError} from "../services/shared/errors.js";
import {ADDRESS_POLICY, FailedAuthThrottle} from "./auth/failed-auth-throttle.js";

/** Where a refusal's headers go: the raw response, set before the problem is written. */
export type HeaderSink = {setHeader(name: string, value: string): unknown};

/** The client's address, as failed authentications are counted against it. */
export function clientAddress(request: {socket: {remoteAddress?: string}}): string {
  return request.socket.remoteAddress ?? "unknown";
}

/** Process-wide things the HTTP edge needs, handed to Ts.ED as one injectable value. */
export class Runtime {
  private readonly authFailures: FailedAuthThrottle;

  /** The limits `rate_limit` sets: requests per key, and failed authentications per address. */
  static fromSettings(settings: Settings, logger: Logger, clock: Clock): Runtime {
    const {per_second, burst, auth_failures_per_minute} = settings.rate_limit;
    return new Runtime({
      settings,
      logger,
      clock,
      keyLimiter: new RateLimiter(per_second, burst, clock),
      authFailureLimiter: new RateLimiter(auth_failures_per_minute / 60, auth_failures_per_minute, clock)
    });
  }

  readonly settings: Settings;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Requests per API key. */
  readonly keyLimiter: RateLimiter;
  /** Failed authentications per client address (guessing keys, signatures, ping tokens). */
  readonly authFailureLimiter: RateLimiter;

  constructor(deps: Pick<Runtime, "settings" | "logger" | "clock" | "keyLimiter" | "authFailureLimiter">) {
    ({
      settings: this.settings,
      logger: this.logger,
      clock: this.clock,
      keyLimiter: this.keyLimiter,
      authFailureLimiter: this.authFailureLimiter
    } = deps);
    this.authFailures = new FailedAuthThrottle(deps.authFailureLimiter, deps.clock, deps.logger);
  }

  /**
   * Called once a request's credential has failed, before its 401/404 is thrown: spends the
   * failure (see `FailedAuthThrottle`) and throws 429 instead when its budget is spent. Never
   * called for a valid credential, which is checked first: a key, token or signature is a long
   * random secret, so letting a throttled address present one gains a guesser nothing, while
   * refusing it would let one bad sender lock out every good one behind the same address.
   * The refusal shows what is left (CONTRACT 9: every answer carries RateLimit).
   */
  authenticationFailed(address: string, credential: string | undefined, response: HeaderSink): void {
    const decision = this.authFailures.failed(address, credential ?? "");
    response.setHeader("RateLimit-Policy", this.authFailureLimiter.policyHeader(decision.policy));
    response.setHeader("RateLimit", this.authFailureLimiter.rateLimitHeader(decision.policy, decision));
    if (!decision.allowed)
      throw new AppError(
        "rate_limited",
        decision.policy === ADDRESS_POLICY
          ? "too many failed authentications from this address; a valid credential is still accepted"
          : "this credential keeps failing (unknown, revoked or rotated); wait before presenting it again",
        {retryAfterSeconds: decision.resetSeconds}
      );
  }

  /** Addresses whose new failed authentications are answered 429 right now. */
  throttledAddresses(): string[] {
    return this.authFailures.throttledAddresses();
  }
}
