import type {Clock} from "./clock.js";

export interface RateDecision {
  allowed: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until a token is available again (when refused) or until the bucket is full. */
  resetSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * Token buckets by key: `burst` tokens at most, refilled at `perSecond`. Idle buckets are
 * forgotten, so a flood of distinct keys cannot grow memory without bound.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly clock: Clock,
    private readonly maxBuckets = 10_000
  ) {}

  take(key: string): RateDecision {
    const now = this.clock.now();
    const bucket = this.buckets.get(key) ?? {tokens: this.burst, updatedMs: now};
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.perSecond);
    bucket.updatedMs = now;
    this.remember(key, bucket);
    if (bucket.tokens < 1) {
      return {allowed: false, remaining: 0, resetSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond))};
    }
    bucket.tokens -= 1;
    return {
      allowed: true,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((this.burst - bucket.tokens) / this.perSecond)
    };
  }

  /** True while a key has no token left, without spending one. */
  exhausted(key: string): boolean {
    const bucket = this.buckets.get(key);
    if (!bucket) return false;
    return bucket.tokens + ((this.clock.now() - bucket.updatedMs) / 1000) * this.perSecond < 1;
  }

  private remember(key: string, bucket: Bucket): void {
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
  }

  /** The RateLimit-Policy header value (IETF draft, structured-field form). */
  policyHeader(name: string): string {
    return `"${name}";q=${this.burst};w=${Math.max(1, Math.round(this.burst / this.perSecond))}`;
  }

  rateLimitHeader(name: string, decision: RateDecision): string {
    return `"${name}";r=${decision.remaining};t=${decision.resetSeconds}`;
  }
}
