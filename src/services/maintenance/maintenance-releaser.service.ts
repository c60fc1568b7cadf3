import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {WakeTimer} from "../../lib/wake-timer.js";
import {RepeatingPass} from "../../lib/repeating-pass.js";
import type {MaintenanceService} from "./maintenance.service.js";

// After a failed pass (the journal could not commit) the next try waits this long instead of spinning.
const RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * Releases what maintenance windows held when they end. `tick()` runs one pass; a timer aims at
 * the earliest end not yet handled (stored, so a window that ended while the gateway was off is
 * handled by the first pass after the start).
 */
export class MaintenanceReleaser {
  private readonly wakeTimer: WakeTimer;
  private readonly pass = new RepeatingPass(
    () => this.maintenance.releaseEnded(),
    (error) => {
      this.failed = error !== null;
      if (error) this.logger.error("releasing ended maintenance windows failed", {error});
      this.arm();
    }
  );
  private started = false;
  private failed = false;

  constructor(
    private readonly maintenance: MaintenanceService,
    clock: Clock,
    private readonly logger: Logger
  ) {
    this.wakeTimer = new WakeTimer(clock, () => void this.tick());
  }

  async start(): Promise<void> {
    this.started = true;
    await this.tick();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.wakeTimer.cancel();
    await this.pass.running;
  }

  /** One pass; a call while a pass runs makes that pass go round once more. */
  tick(): Promise<void> {
    return this.pass.run();
  }

  /** Re-aims the timer at the earliest end still to handle; the service calls it after every change. */
  arm(): void {
    if (!this.started || this.pass.running) return;
    this.wakeTimer.aim(this.maintenance.earliestEnd(), this.failed ? RETRY_AFTER_FAILURE_MS : 0);
  }
}
