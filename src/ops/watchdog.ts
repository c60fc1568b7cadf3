import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import type {LivenessProbe} from "./liveness.js";
import type {SystemdNotifier} from "./systemd-notify.js";

/**
 * Pings systemd's watchdog only after the liveness probe passed, so a gateway whose event loop,
 * journal or escalation runner is stuck is killed and restarted (Restart=on-failure) instead
 * of looking healthy.
 */
export class Watchdog {
  private readonly task: PeriodicTask;
  private failing = false;

  constructor(
    private readonly notifier: SystemdNotifier,
    /** The gateway's probe; a standby box, which runs no journal or runner, passes a trivial one. */
    private readonly probe: Pick<LivenessProbe, "check">,
    intervalMs: number,
    private readonly logger: Logger
  ) {
    this.task = new PeriodicTask("systemd-watchdog", intervalMs, () => this.pass(), logger);
  }

  /** One probe and, when it passed, one ping. */
  tick(): Promise<void> {
    return this.task.tick();
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  private async pass(): Promise<void> {
    const report = await this.probe.check();
    if (report.alive) {
      if (this.failing) this.logger.info("watchdog: liveness probe passes again");
      this.failing = false;
      await this.notifier.watchdog();
      return;
    }
    this.failing = true;
    this.logger.error("watchdog: liveness probe failed, systemd is not pinged", {failures: report.failures});
    await this.notifier.notify({STATUS: `unhealthy: ${report.failures.join("; ")}`});
  }
}
