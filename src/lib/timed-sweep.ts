import {isoTimestamp, type Clock} from "./clock.js";
import {RepeatingPass} from "./repeating-pass.js";
import {WakeTimer} from "./wake-timer.js";

/** What a timed sweep runs and where its next wake-up comes from. */
export interface TimedSweepWork {
  /** One pass over whatever is due now. */
  pass: () => Promise<void>;
  /** When the next pass is due (ms since the epoch), read from the store after every pass; null: nothing planned. */
  nextDue: () => number | null;
  /** Hears a failed pass; the sweep itself retries after `retryAfterFailureMs`. */
  failed: (error: unknown) => void;
  /** After a failed pass (the journal could not commit) the next try waits this long instead of spinning. */
  retryAfterFailureMs?: number;
}

/**
 * A background sweep that nothing polls: one pass at a time (a wake-up mid-pass makes the pass go
 * round once more), then a timer aimed at the next due time the store reports. The heartbeat
 * sweep, the maintenance releaser and the hand-off notices all run this way.
 */
export class TimedSweep {
  private readonly wakeTimer: WakeTimer;
  private readonly sweep: RepeatingPass;
  private started = false;
  private lastPassFailed = false;

  constructor(
    private readonly clock: Clock,
    private readonly work: TimedSweepWork
  ) {
    this.wakeTimer = new WakeTimer(clock, () => void this.tick());
    this.sweep = new RepeatingPass(work.pass, (error) => {
      this.lastPassFailed = error !== null;
      if (error) work.failed(error);
      this.arm();
    });
  }

  /** Runs the first pass; from then on the timer keeps it going. */
  async start(): Promise<void> {
    this.started = true;
    await this.tick();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.wakeTimer.cancel();
    await this.sweep.running;
  }

  /** One pass; a call while a pass runs makes that pass go round once more. */
  tick(): Promise<void> {
    return this.sweep.run();
  }

  /**
   * Re-aims the timer at the next due time; owners call it after every change that may move it.
   * Never throws: when the store cannot say when (the same failure that failed the pass, usually),
   * the sweep counts as failed and tries again after the pause, instead of its timer dying with
   * an unhandled rejection and the sweep never running again.
   */
  arm(): void {
    if (!this.started || this.sweep.running) return;
    let due: number | null;
    try {
      due = this.work.nextDue();
    } catch (error) {
      this.lastPassFailed = true;
      this.work.failed(error);
      due = this.clock.now();
    }
    this.wakeTimer.aim(due, this.lastPassFailed ? (this.work.retryAfterFailureMs ?? 5_000) : 0);
  }

  /** Health for readiness and tests: whether the loop runs and when it next wakes. */
  get health(): {running: boolean; next_wake_at: string | null; last_pass_failed: boolean} {
    const wakeAt = this.wakeTimer.wakeAt;
    return {
      running: this.started,
      next_wake_at: wakeAt === null ? null : isoTimestamp(wakeAt),
      last_pass_failed: this.lastPassFailed
    };
  }
}
