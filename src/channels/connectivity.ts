import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {WakeTimer} from "../lib/wake-timer.js";

/**
 * Whether an internet service can be used: `unknown` until the first answer, `online`,
 * `offline` (no answer: WAN down, or the service broken), or `refused` (it answers but will not
 * serve us, e.g. a wrong bot token: waiting for the link will not help).
 */
export type LinkState = "unknown" | "online" | "offline" | "refused";

/** One observation of the link: a call that got through, or one that failed and how. */
export type LinkObservation = {ok: true} | {ok: false; state: "offline" | "refused"; error: string};

/** What /readyz shows about the link; never a secret. */
export interface LinkSnapshot {
  state: LinkState;
  /** When the current state began. */
  since: string | null;
  last_checked_at: string | null;
  last_error: string | null;
  next_check_at: string | null;
}

export interface ConnectivityOptions {
  /** Names the service in reasons and logs, e.g. "the Telegram Bot API". */
  name: string;
  /** One probe; resolves with what it saw, never throws. */
  check(signal: AbortSignal): Promise<LinkObservation>;
  /** Between probes while the link works. */
  intervalMs: number;
  /** The longest pause between probes while it does not. */
  maxBackoffMs: number;
  clock: Clock;
  logger: Logger;
}

/**
 * The pause before the next probe: the interval while the link works; after failures it doubles
 * from the interval up to `maxBackoffMs`, so a long outage is not hammered. Recovery is usually
 * seen sooner anyway, by the next call of any kind that gets through.
 */
export function probeDelayMs(consecutiveFailures: number, intervalMs: number, maxBackoffMs: number): number {
  if (consecutiveFailures === 0) return intervalMs;
  return Math.min(intervalMs * 2 ** (consecutiveFailures - 1), Math.max(intervalMs, maxBackoffMs));
}

/**
 * Watches one internet service. A probe runs on a timer (with backoff while it fails), and every
 * real call reports what it saw too, so a failure during a delivery marks the link down at once
 * and any call that gets through marks it up. Listeners hear every success (the relay uses that
 * to send what waited).
 */
export class ConnectivityProbe {
  private state: LinkState = "unknown";
  private since: string | null = null;
  private lastCheckedAt: string | null = null;
  private lastError: string | null = null;
  private failures = 0;
  private readonly timer: WakeTimer;
  private readonly listeners: Array<() => void> = [];
  private running: Promise<void> | null = null;
  private stopper = new AbortController();
  private started = false;

  constructor(private readonly options: ConnectivityOptions) {
    this.timer = new WakeTimer(options.clock, () => void this.tick());
  }

  get snapshot(): LinkSnapshot {
    const next = this.timer.wakeAt;
    return {
      state: this.state,
      since: this.since,
      last_checked_at: this.lastCheckedAt,
      last_error: this.lastError,
      next_check_at: next === null ? null : isoTimestamp(next)
    };
  }

  get isOffline(): boolean {
    return this.state === "offline";
  }

  /** Why the service cannot be used now, or null (also while the first probe is still out: a call then finds out). */
  unavailableReason(): string | null {
    if (this.state === "offline") return `${this.options.name} is unreachable since ${this.since} (${this.lastError})`;
    if (this.state === "refused")
      return `${this.options.name} refuses this gateway since ${this.since} (${this.lastError})`;
    return null;
  }

  onSuccess(listener: () => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    this.started = true;
    void this.tick();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.timer.cancel();
    this.stopper.abort(new Error("the gateway is stopping"));
    await this.running;
    this.stopper = new AbortController();
  }

  /** One probe now, then the timer is aimed at the next one. */
  tick(): Promise<void> {
    this.running ??= (async () => {
      try {
        const observation = await this.options.check(this.stopper.signal);
        if (!this.stopper.signal.aborted) this.observe(observation);
      } finally {
        this.running = null;
        if (this.started)
          this.timer.aim(
            this.options.clock.now() + probeDelayMs(this.failures, this.options.intervalMs, this.options.maxBackoffMs)
          );
      }
    })();
    return this.running;
  }

  /** Records what a probe or a real call saw; state changes are logged once, not on every probe. */
  observe(observation: LinkObservation): void {
    const now = isoTimestamp(this.options.clock.now());
    this.lastCheckedAt = now;
    const next: LinkState = observation.ok ? "online" : observation.state;
    this.failures = observation.ok ? 0 : this.failures + 1;
    if (!observation.ok) this.lastError = observation.error;
    if (next !== this.state) {
      const previous = this.state;
      this.state = next;
      this.since = now;
      if (observation.ok) this.options.logger.info(`${this.options.name} is reachable`, {previous});
      else this.options.logger.warn(`${this.options.name} is ${next}`, {previous, error: observation.error});
    }
    if (observation.ok) for (const listener of this.listeners) listener();
  }
}
