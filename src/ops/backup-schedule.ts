import cron, {type ScheduledTask} from "node-cron";
import type {Logger} from "../lib/logger.js";
import type {BackupService} from "./backups.js";

/** Runs the nightly backup on the `backup.schedule` cron expression; an empty one turns it off. */
export class BackupSchedule {
  private task: ScheduledTask | null = null;

  constructor(
    private readonly expression: string,
    private readonly backups: BackupService,
    private readonly logger: Logger
  ) {
    if (expression && !cron.validate(expression)) throw new Error(`backup.schedule: "${expression}" is not a cron expression (minute hour day month weekday)`);
  }

  start(): void {
    if (!this.expression || this.task) return;
    // unref: a pending backup must not keep a stopping process alive.
    this.task = cron.schedule(this.expression, () => this.run(), {name: "klaxon-backup", noOverlap: true, unref: true, suppressMissedWarning: true, logger: cronLogger(this.logger)});
    this.logger.info("backups scheduled", {schedule: this.expression, next: this.task.getNextRun()?.toISOString() ?? null});
  }

  async stop(): Promise<void> {
    await this.task?.destroy();
    this.task = null;
  }

  private async run(): Promise<void> {
    try {
      await this.backups.create();
    } catch {
      // BackupService logged why; the next night tries again, and /metrics shows the last success.
    }
  }
}

// node-cron's own logger writes free text to the console; ours writes JSON lines.
function cronLogger(logger: Logger) {
  return {
    info: (message: string) => logger.debug("cron", {message}),
    warn: (message: string) => logger.warn("cron", {message}),
    error: (message: string | Error) => logger.error("cron", {error: String(message)}),
    debug: (message: string | Error) => logger.debug("cron", {message: String(message)})
  };
}
