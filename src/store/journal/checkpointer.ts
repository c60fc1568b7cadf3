import {Worker} from "node:worker_threads";
import {createRequire} from "node:module";
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

/** Background WAL checkpoints on a worker thread (its own SQLite connection). */
export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;
  lastCheckpoint: {busy: number; log: number; checkpointed: number} | null = null;

  constructor(path: string, intervalMs: number, logger: Logger) {
    const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {eval: true, workerData: {path, intervalMs, betterSqlite3}});
    this.worker.unref();
    this.worker.on("message", (message: WorkerMessage) => {
      if (message.type === "checkpoint")
        this.lastCheckpoint = {busy: message.busy, log: message.log, checkpointed: message.checkpointed};
      if (message.type === "error") logger.warn("journal checkpoint failed", {error: message.message});
    });
    this.worker.on("error", (error) => logger.error("journal checkpointer crashed", {error}));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await new Promise<void>((resolve) => {
      const timeout = setTimeout(resolve, 2000);
      this.worker.once("message", () => {
        clearTimeout(timeout);
        resolve();
      });
      this.worker.once("exit", () => {
        clearTimeout(timeout);
        resolve();
      });
      this.worker.postMessage("stop");
    });
    await this.worker.terminate();
  }
}
