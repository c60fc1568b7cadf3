import type {Logger} from "./logger.js";

/**
 * A background loop: `tick()` does one pass and can be called directly from a test; `start()`
 * runs it every `intervalMs`, never two passes at once, and a failing pass is logged and retried
 * on the next interval instead of stopping the loop.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    /** One pass, synchronous or async. */
    private readonly pass: () => unknown,
    private readonly logger: Logger
  ) {}

  async tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        await this.pass();
      } catch (error) {
        this.logger.error("background task failed", {task: this.name, error: error as Error});
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.running) await this.running;
  }
}
