import {cronProblem, nextCronTime, parseCron, type CronExpression} from "../domain/cron.js";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {WakeTimer} from "../lib/wake-timer.js";
import type {BackupService} from "./backups.js";

/** What BackupSchedule works with, by name. */
export interface BackupScheduleDeps {
  expression: string;
  zone: string;
  backups: BackupService;
  clock: Clock;
  logger: Logger;
}

/**
 * Runs the nightly backup on the `backup.schedule` cron expression, read in the box's time zone;
 * an empty one turns it off. The expression is read by domain/cron.ts, the parser heartbeat
 * schedules use, so both accept the same expressions and refuse the rest with the same words.
 * A backup still running when the next slot comes makes that slot pass; a slot missed while the
 * gateway was down is not made up at start.
 */
export class BackupSchedule {
  private readonly cron: CronExpression | null;
  private readonly timer: WakeTimer;
  private nextAtMs: number | null = null;
  private running = false;

  constructor(private readonly deps: BackupScheduleDeps) {
    const {expression, zone, clock} = deps;
    const problem = expression ? cronProblem(expression, zone, clock.now()) : null;
    if (problem) throw new Error(`backup.schedule: "${expression}": ${problem}`);
    this.cron = expression ? parseCron(expression) : null;
    this.timer = new WakeTimer(clock, () => void this.tick());
  }

  /** When the next backup is due (ms since the epoch), or null when the schedule is off or stopped. */
  get nextAt(): number | null {
    return this.nextAtMs;
  }

  start(): void {
    if (!this.cron || this.nextAtMs !== null) return;
    this.nextAtMs = nextCronTime(this.cron, this.deps.zone, this.deps.clock.now());
    this.timer.aim(this.nextAtMs);
    this.deps.logger.info("backups scheduled", {
      schedule: this.deps.expression,
      timezone: this.deps.zone,
      next: this.nextAtMs === null ? null : isoTimestamp(this.nextAtMs)
    });
  }

  /** One pass: when the due time has come, aims at the following one and runs the backup. */
  async tick(): Promise<void> {
    if (!this.cron || this.nextAtMs === null) return;
    const now = this.deps.clock.now();
    const due = now >= this.nextAtMs;
    if (due) this.nextAtMs = nextCronTime(this.cron, this.deps.zone, now);
    // The wake timer sleeps at most a few minutes, so most passes only aim again.
    this.timer.aim(this.nextAtMs);
    if (!due) return;
    if (this.running) {
      this.deps.logger.warn("scheduled backup skipped: the previous one is still running", {
        schedule: this.deps.expression
      });
      return;
    }
    this.running = true;
    try {
      await this.deps.backups.create();
    } catch {
      // BackupService logged why; the next slot tries again, and /metrics shows the last success.
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    this.timer.cancel();
    this.nextAtMs = null;
  }
}
