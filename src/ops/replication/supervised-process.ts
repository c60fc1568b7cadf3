import {spawn, type ChildProcess} from "node:child_process";
import {createInterface} from "node:readline";
import type {Logger} from "../../lib/logger.js";

const FIRST_RESTART_MS = 1000;
const LONGEST_RESTART_MS = 30_000;
/** A run this long counts as healthy: the next failure restarts after the first delay again. */
const HEALTHY_RUN_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface ProcessState {
  running: boolean;
  pid: number | null;
  restarts: number;
  /** How the last run ended ("exit 1", "signal SIGKILL", "spawn ENOENT"); null before any ended. */
  last_exit: string | null;
}

/**
 * A helper program (Litestream) kept running beside the gateway: its output goes to the log
 * line by line, and when it ends by itself it is started again after a delay that doubles up to
 * 30 s, so a replica that is away is retried without a busy loop. `stop()` asks it to end
 * (SIGTERM: Litestream ships what is left first) and kills it after 10 s.
 */
export class SupervisedProcess {
  private child: ChildProcess | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private delayMs = FIRST_RESTART_MS;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();
  readonly state: ProcessState = {running: false, pid: null, restarts: 0, last_exit: null};

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly logger: Logger
  ) {}

  start(): void {
    this.stopping = false;
    this.launch();
  }

  private launch(): void {
    const startedAt = Date.now();
    const child = spawn(this.command, this.args, {stdio: ["ignore", "pipe", "pipe"]});
    this.child = child;
    this.state.running = true;
    this.state.pid = child.pid ?? null;
    for (const stream of [child.stdout, child.stderr])
      createInterface({input: stream}).on("line", (line) => this.logger.info(line, {pid: child.pid}));
    this.exited = new Promise((resolve) => {
      const ended = (how: string) => {
        if (this.child !== child) return;
        this.child = null;
        this.state.running = false;
        this.state.pid = null;
        this.state.last_exit = how;
        resolve();
        if (this.stopping) return;
        if (Date.now() - startedAt >= HEALTHY_RUN_MS) this.delayMs = FIRST_RESTART_MS;
        this.logger.warn("ended; starting it again", {how, in_ms: this.delayMs});
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          this.state.restarts++;
          this.launch();
        }, this.delayMs);
        this.delayMs = Math.min(this.delayMs * 2, LONGEST_RESTART_MS);
      };
      child.once("error", (error) => ended(`spawn ${(error as NodeJS.ErrnoException).code ?? error.message}`));
      child.once("exit", (code, signal) => ended(signal ? `signal ${signal}` : `exit ${code}`));
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(killer);
  }
}
