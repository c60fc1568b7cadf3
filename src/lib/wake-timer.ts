import type {Clock} from "./clock.js";

/**
 * One timer aimed at the next due time a store reports (timers are wake-ups, not state). The
 * due time is wall-clock but the wait is a monotonic timer, so the sleep is capped: re-reading
 * the store at least every `maxSleepMs` keeps a wall-clock jump from delaying work for hours.
 */
export class WakeTimer {
  private timer: NodeJS.Timeout | null = null;
  private wakeAtMs: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
    private readonly maxSleepMs = 5 * 60_000
  ) {}

  /** When the timer will fire (ms since the epoch), or null when it is not set. */
  get wakeAt(): number | null {
    return this.wakeAtMs;
  }

  /** Aims at `dueMs`, but not sooner than `minDelayMs` from now; null cancels. */
  aim(dueMs: number | null, minDelayMs = 0): void {
    this.cancel();
    if (dueMs === null) return;
    const now = this.clock.now();
    const delay = Math.min(Math.max(dueMs - now, minDelayMs), this.maxSleepMs);
    this.wakeAtMs = now + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, delay);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wakeAtMs = null;
  }
}
