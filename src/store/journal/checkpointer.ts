import {Worker} from "node:worker_threads";
import {statSync} from "node:fs";
import {createRequire} from "node:module";
import {performance} from "node:perf_hooks";
import type {Logger} from "../../lib/logger.js";

// Plain CommonJS so the worker runs the same way under the TypeScript loader, vitest and the
// build. It opens its own connection and folds the WAL into the database file in the
// background; PASSIVE never blocks writers, so commits on the main thread never wait for it.
const WORKER_SOURCE = `
const {parentPort, workerData} = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 1000");
const timer = setInterval(() => {
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({type: "checkpoint", ...row});
  } catch (error) {
    parentPort.postMessage({type: "error", message: String(error && error.message)});
  }
}, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message === "stop") {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({type: "stopped"});
  }
});
`;

/** What the worker posts (WORKER_SOURCE): a checkpoint's counts, a failure, or that it stopped. */
type WorkerMessage =
  | {type: "checkpoint"; busy: number; log: number; checkpointed: number}
  | {type: "error"; message: string}
  | {type: "stopped"};

/**
 * The worker thread is a whole second V8 heap (about 23 MB resident), which an idle gateway should
 * not keep (issue 36). It runs while writes come in bulk: started at open when the last run left a
 * WAL of WAL_BYTES_AT_OPEN or more, and once this many writes are waiting to be folded; let go when a pass folds the
 * whole WAL with fewer than this many writes since the pass before, and none of the passes for
 * `idleMs` saw more. The few writes of an idle gateway (the watchdog's probe every 15 s) wait in
 * the WAL for the next worker or the close, which folds it in.
 */
export const CHECKPOINT_AFTER_WRITES = 200;
const IDLE_PASSES = 30;
const WAL_BYTES_AT_OPEN = 1024 * 1024;

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Background WAL checkpoints on a worker thread (its own SQLite connection), while there is work to fold in. */
export class Checkpointer {
  private worker: Worker | null = null;
  private stopped = false;
  private writesSincePass = 0;
  private lastBusyMs = performance.now();
  lastCheckpoint: {busy: number; log: number; checkpointed: number} | null = null;

  constructor(
    private readonly path: string,
    private readonly intervalMs: number,
    private readonly logger: Logger
  ) {
    if (fileBytes(`${path}-wal`) >= WAL_BYTES_AT_OPEN) this.spawn();
  }

  /** Whether the worker thread is up (for tests and the idle footprint). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Told after each commit with the writes it carried. */
  committed(writes: number): void {
    this.writesSincePass += writes;
    if (!this.worker && !this.stopped && this.writesSincePass >= CHECKPOINT_AFTER_WRITES) {
      this.lastBusyMs = performance.now();
      this.spawn();
    }
  }

  private spawn(): void {
    const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {path: this.path, intervalMs: this.intervalMs, betterSqlite3}
    });
    this.worker = worker;
    worker.unref();
    worker.on("message", (message: WorkerMessage) => {
      if (message.type === "checkpoint") this.passed(worker, message);
      if (message.type === "error") this.logger.warn("journal checkpoint failed", {error: message.message});
    });
    worker.on("error", (error) => this.logger.error("journal checkpointer crashed", {error}));
  }

  private passed(worker: Worker, pass: {busy: number; log: number; checkpointed: number}): void {
    this.lastCheckpoint = {busy: pass.busy, log: pass.log, checkpointed: pass.checkpointed};
    const now = performance.now();
    const busy = this.writesSincePass >= CHECKPOINT_AFTER_WRITES;
    this.writesSincePass = 0;
    if (busy) this.lastBusyMs = now;
    const folded = pass.busy === 0 && pass.checkpointed === pass.log;
    if (folded && !busy && this.worker === worker && now - this.lastBusyMs >= IDLE_PASSES * this.intervalMs) {
      this.worker = null;
      void this.end(worker);
    }
  }
  /** Asks the worker to close its connection, then ends the thread (after 2 s whatever it said). */
  private async end(worker: Worker): Promise<void> {
    await new Promise<void>((resolve) => {
      const timeout = setTimeout(resolve, 2000);
      const done = () => {
        clearTimeout(timeout);
        resolve();
      };
      worker.on("message", (message: WorkerMessage) => message.type === "stopped" && done());
      worker.once("exit", done);
      worker.postMessage("stop");
    });
    await worker.terminate();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const worker = this.worker;
    this.worker = null;
    if (worker) await this.end(worker);
  }
}
