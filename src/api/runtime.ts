import type {Settings} from "../settings/defaults.js";
import type {Logger} from "../lib/logger.js";
import type {Clock} from "../lib/clock.js";
import type {RateLimiter} from "./auth/rate-limiter.js";
import {AppError} from "../services/errors.js";

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
  admitAddress(request: {socket: {remoteAddress?: string}}): string {
    const address = request.socket.remoteAddress ?? "unknown";
    if (this.authFailureLimiter.exhausted(address)) {
      throw new AppError("rate_limited", "too many failed authentications from this address", {retryAfterSeconds: this.authFailureLimiter.take(address).resetSeconds});
    }
    return address;
  }

  authenticationFailed(address: string): void {
    this.authFailureLimiter.take(address);
  }
}
