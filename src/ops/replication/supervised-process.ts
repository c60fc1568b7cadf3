import {spawn, type ChildProcess} from "node:child_process";
import {readFileSync, rmSync, writeFileSync} from "node:fs";
import {basename} from "node:path";
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
    private readonly logger: Logger,
    /** Where the running child's pid is kept, so the next start ends one a killed gateway left behind. */
    private readonly pidFile: string | null = null
  ) {}

  start(): void {
    this.stopping = false;
    this.endLeftover();
    this.launch();
  }

  /** Only a help for the next start: failing to write it (a full disk) must not stop this one. */
  private notePid(pid: number): void {
    try {
      writeFileSync(this.pidFile!, `${pid}\n`);
    } catch (error) {
      this.logger.warn("cannot note the pid", {file: this.pidFile, error: error as Error});
    }
  }

  /**
   * A gateway killed with SIGKILL cannot stop its child (systemd's cgroup does; a shell does not):
   * a second Litestream on the same journal or replica would race the new one, so it is ended first.
   */
  private endLeftover(): void {
    if (!this.pidFile) return;
    let pid: number;
    try {
      pid = Number(readFileSync(this.pidFile, "utf8").trim());
    } catch {
      return;
    }
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      return; // long gone
    }
    if (!commandLine.includes(basename(this.command))) return; // the pid belongs to someone else now
    process.kill(pid, "SIGKILL");
    this.logger.warn("ended the one a killed gateway left running", {pid});
  }

  private launch(): void {
    const startedAt = Date.now();
    const child = spawn(this.command, this.args, {stdio: ["ignore", "pipe", "pipe"]});
    this.child = child;
    this.state.running = true;
    this.state.pid = child.pid ?? null;
    if (this.pidFile && child.pid) this.notePid(child.pid);
    for (const stream of [child.stdout, child.stderr])
      createInterface({input: stream}).on("line", (line) => this.logger.info(line, {pid: child.pid}));
    this.exited = new Promise((resolve) => {
      const ended = (how: string) => {
        if (this.child !== child) return;
        this.child = null;
        this.state.running = false;
        this.state.pid = null;
        this.state.last_exit = how;
        if (this.pidFile) rmSync(this.pidFile, {force: true});
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
