import type {Settings} from "../settings/defaults.js";
import type {Logger} from "../lib/logger.js";
import type {Clock} from "../lib/clock.js";
import type {RateLimiter} from "./auth/rate-limiter.js";

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
}
