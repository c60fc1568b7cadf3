import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {WakeTimer} from "../../lib/wake-timer.js";
import {RepeatingPass} from "../../lib/repeating-pass.js";
import type {HeartbeatsService} from "./heartbeats.service.js";

// After a failed pass (the journal could not commit) the next try waits this long instead of spinning.
const RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * The heartbeat sweep. `tick()` runs one pass (every due heartbeat turns late or down, each
 * exactly once); a timer aims at the earliest stored sweep time, so nothing polls. On start,
 * every heartbeat first gets a fresh grace time: the gateway was not there to be pinged.
 */
export class HeartbeatMonitor {
  private readonly wakeTimer: WakeTimer;
  private readonly sweep = new RepeatingPass(
    () => this.heartbeats.sweep(),
    (error) => {
      this.failed = error !== null;
      if (error) this.logger.error("heartbeat sweep failed", {error: error});
      this.arm();
    }
  );
  private started = false;
  private failed = false;

  constructor(
    private readonly heartbeats: HeartbeatsService,
    clock: Clock,
    private readonly logger: Logger
  ) {
    this.wakeTimer = new WakeTimer(clock, () => void this.tick());
  }

  /** Call once the gateway serves: the fresh grace counts from that moment. */
  async start(): Promise<void> {
    const moved = await this.heartbeats.recoverAfterRestart();
    if (moved) this.logger.info("heartbeats given a fresh grace time after the restart", {count: moved});
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

  /** Re-aims the timer at the earliest stored sweep time; heartbeats call it after every change. */
  arm(): void {
    if (!this.started || this.sweep.running) return;
    this.wakeTimer.aim(this.heartbeats.earliestDue(), this.failed ? RETRY_AFTER_FAILURE_MS : 0);
  }

  /** Health for readiness and tests: whether the loop runs and when it next wakes. */
  get health(): {running: boolean; next_wake_at: string | null; last_pass_failed: boolean} {
    const wakeAt = this.wakeTimer.wakeAt;
    return {
      running: this.started,
      next_wake_at: wakeAt === null ? null : isoTimestamp(wakeAt),
      last_pass_failed: this.failed
    };
  }
}
