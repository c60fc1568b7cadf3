import {existsSync} from "node:fs";
import {createRequire} from "node:module";
import {dirname, join} from "node:path";
import {pathToFileURL} from "node:url";
import {isMainThread, parentPort, Worker, workerData, type ResourceLimits} from "node:worker_threads";
import type {Logger} from "./logger.js";

/**
 * A bulkhead for parsers of untrusted input (design rule 14): the parser runs in a worker thread
 * that the gateway supervises. A throw that escapes the worker, a hang (no heartbeat) or runaway
 * memory (resourceLimits) ends that worker only; it is logged, counted and restarted after a
 * back-off, and the main thread, which pages people, goes on.
 *
 * Main thread:
 *   const parser = new SupervisedWorker<Work, Event>({name, module: workerModule(import.meta.url, "./x.worker"), onEvent, logger});
 *   await parser.start(); parser.post(work); ... await parser.stop();
 * Worker module (`x.worker.ts`, beside the caller):
 *   serveSupervisedWork<Work, Event>((work, emit) => emit(parse(work)));
 *
 * Work and events cross by structured clone; only plain data the main thread then validates
 * should cross back (the worker is as untrusted as the bytes it reads).
 */

/** Why a worker ended without being asked to. */
export const WORKER_CRASH_KINDS = ["throw", "hang", "memory", "exit"] as const;
export type WorkerCrashKind = (typeof WORKER_CRASH_KINDS)[number];

/** One worker's end, as logged and handed to `onCrash`. */
export interface WorkerCrash {
  name: string;
  kind: WorkerCrashKind;
  /** The error's message (a throw, a failed load, out of memory), or the exit code. */
  detail: string;
  /** Work posted to it and not yet answered: lost with it. */
  inFlight: number;
  /** The pause before the next worker starts. */
  restartInMs: number;
}

/** Counters of one supervised worker, for metrics and /readyz. */
export interface SupervisedWorkerStats {
  name: string;
  running: boolean;
  /** Workers started after the first (restarts after a crash). */
  restarts: number;
  crashes: Record<WorkerCrashKind, number>;
  /** Work refused because no worker was running or its queue was full. */
  dropped: number;
  /** Work that was in a worker when it crashed. */
  lostInCrash: number;
  inFlight: number;
  lastCrash: {kind: WorkerCrashKind; detail: string; atMs: number} | null;
}

export interface SupervisedWorkerOptions<Event> {
  /** Names the worker in logs, metrics and thread names ("snmp-parser"). */
  name: string;
  /** The worker's module: `workerModule(import.meta.url, "./x.worker")`. */
  module: URL;
  /** Handed to the worker as `supervisedWorkerData()`; structured-cloned. */
  data?: unknown;
  /** Each event the worker emits. It runs on the main thread: validate before trusting it. */
  onEvent: (event: Event) => void;
  /** Each crash, after it is counted and logged (e.g. to raise a metric or mark a readiness reason). */
  onCrash?: (crash: WorkerCrash) => void;
  /** Each time a worker (first or restarted) is ready: re-send state the worker keeps (credentials). */
  onReady?: () => void;
  logger: Logger;
  /** Memory and stack of the worker; defaults: 64 MB old, 16 MB young generation, 4 MB stack. */
  resourceLimits?: ResourceLimits;
  /** The worker beats this often (default 500 ms)... */
  heartbeatMs?: number;
  /** ...and is ended as hung after this long without a beat (default 5 s). */
  hangAfterMs?: number;
  /** A worker still loading (compiling TypeScript takes seconds on a small box) is hung only after this (default 60 s). */
  loadLimitMs?: number;
  /** Restart pauses: doubling from the first (100 ms) up to the last (30 s); reset once a worker ran `stableMs` (60 s). */
  backoff?: {firstMs: number; maxMs: number; stableMs: number};
  /** Work posted and not yet answered beyond which new work is dropped (default 1024). */
  maxInFlight?: number;
  /** Milliseconds for the watchdog; the system clock unless a test gives another. */
  now?: () => number;
}

interface Envelope {
  kind: "ready" | "beat" | "event" | "done";
  event?: unknown;
}

const DEFAULT_LIMITS: ResourceLimits = {maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4};
const DEFAULT_BACKOFF = {firstMs: 100, maxMs: 30_000, stableMs: 60_000};
const SWC_REGISTER_FILE = "esm/esm-register.mjs";

/**
 * The worker module beside `callerUrl` (its `import.meta.url`): `.ts` when the caller runs from
 * TypeScript (vitest, `npm start`), `.js` when it runs from the build (dist/).
 */
export function workerModule(callerUrl: string, relative: string): URL {
  const extension = callerUrl.endsWith(".ts") ? ".ts" : ".js";
  return new URL(relative + extension, callerUrl);
}

/**
 * A worker thread starts with no TypeScript loader of its own (vitest's transform stays in the
 * test's thread), so a `.ts` module gets @swc-node's loader, the one `npm start` uses, by absolute
 * URL. Nothing else of the parent's command line is passed: `npm start`'s `--v8-pool-size` is a
 * per-process option a worker refuses (ERR_WORKER_INVALID_EXEC_ARGV).
 */
function execArgvFor(module: URL): string[] {
  if (!module.pathname.endsWith(".ts")) return [];
  const require = createRequire(import.meta.url);
  // The loader's native binding (@swc/core) is unloaded when the last thread using it ends, and
  // loading it again in the next worker crashes the process (SIGSEGV, seen with Node 22.23):
  // holding it in this thread keeps it loaded. Only for TypeScript runs; the build needs none.
  require("@swc/core");
  // The package exports its ESM entry under "import" only; its main entry (resolvable from
  // CommonJS) sits at the package root, beside the esm/ folder.
  const main = require.resolve("@swc-node/register");
  return ["--import", pathToFileURL(join(dirname(main), SWC_REGISTER_FILE)).href];
}

/** Supervises one worker: starts it, restarts it after a crash with back-off, counts what happened. */
export class SupervisedWorker<Work, Event> {
  private worker: Worker | null = null;
  private running = false;
  private stopping = false;
  private started = 0;
  private inFlight = 0;
  private lastBeatMs = 0;
  private startedAtMs = 0;
  private nextPauseMs: number;
  private watchdog: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private readyWaiter: ((error?: Error) => void) | null = null;
  /** The worker the watchdog ended, so its exit counts as a hang. */
  private hung: Worker | null = null;
  private readonly counts: Omit<SupervisedWorkerStats, "name" | "running" | "inFlight"> = {
    restarts: 0,
    crashes: {throw: 0, hang: 0, memory: 0, exit: 0},
    dropped: 0,
    lostInCrash: 0,
    lastCrash: null
  };
  private readonly now: () => number;
  private readonly backoff: {firstMs: number; maxMs: number; stableMs: number};

  constructor(private readonly options: SupervisedWorkerOptions<Event>) {
    if (!existsSync(options.module)) throw new Error(`${options.name}: no worker module at ${options.module.href}`);
    this.now = options.now ?? (() => performance.now());
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.nextPauseMs = this.backoff.firstMs;
  }

  /** Starts the first worker; resolves once it is ready, rejects when it cannot even load. */
  async start(): Promise<void> {
    this.stopping = false;
    await new Promise<void>((resolve, reject) => {
      this.readyWaiter = (error) => (error ? reject(error) : resolve());
      this.spawn();
    });
    const hangAfterMs = this.options.hangAfterMs ?? 5_000;
    this.watchdog = setInterval(() => this.checkHeartbeat(), Math.max(20, Math.floor(hangAfterMs / 4)));
    this.watchdog.unref();
  }

  /** Ends the worker and any pending restart; work in flight is dropped. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.watchdog = this.restartTimer = null;
    const worker = this.worker;
    this.worker = null;
    this.running = false;
    this.inFlight = 0;
    if (worker) await worker.terminate();
  }

  /**
   * Hands one piece of work to the worker; false (and counted as dropped) when no worker is
   * running or `maxInFlight` pieces are still unanswered: a flood waits for no one.
   */
  post(work: Work, transfer?: ArrayBuffer[]): boolean {
    if (!this.worker || !this.running || this.inFlight >= (this.options.maxInFlight ?? 1024)) {
      this.counts.dropped++;
      return false;
    }
    this.inFlight++;
    this.worker.postMessage({kind: "work", work}, transfer);
    return true;
  }

  /**
   * Ends the running worker as a crash would (counted as an exit, restarted after the back-off):
   * what a test does to prove that a worker's end costs that worker only.
   */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  stats(): SupervisedWorkerStats {
    return {
      name: this.options.name,
      running: this.running,
      inFlight: this.inFlight,
      ...this.counts,
      crashes: {...this.counts.crashes}
    };
  }

  private spawn(): void {
    const worker = new Worker(this.options.module, {
      name: this.options.name,
      workerData: {heartbeatMs: this.options.heartbeatMs ?? 500, data: this.options.data},
      resourceLimits: this.options.resourceLimits ?? DEFAULT_LIMITS,
      execArgv: execArgvFor(this.options.module),
      stdout: false,
      stderr: false
    });
    this.worker = worker;
    this.inFlight = 0;
    this.lastBeatMs = this.startedAtMs = this.now();
    // The first error decides the kind; "exit" follows every end and reports it once.
    let failure: {kind: WorkerCrashKind; detail: string} | null = null;
    worker.on("message", (envelope: Envelope) => this.receive(worker, envelope));
    worker.on("error", (error: Error & {code?: string}) => {
      failure ??= {
        kind: error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "memory" : "throw",
        detail: error.message
      };
    });
    worker.on("exit", (code) => {
      if (this.worker !== worker) return;
      this.crashed(failure ?? {kind: this.hung === worker ? "hang" : "exit", detail: `exit code ${code}`});
    });
  }

  private receive(worker: Worker, envelope: Envelope): void {
    if (this.worker !== worker) return;
    this.lastBeatMs = this.now();
    if (envelope.kind === "ready") {
      this.running = true;
      if (this.started++ > 0) this.counts.restarts++;
      this.readyWaiter?.();
      this.readyWaiter = null;
      this.options.onReady?.();
    } else if (envelope.kind === "done") this.inFlight = Math.max(0, this.inFlight - 1);
    else if (envelope.kind === "event") this.options.onEvent(envelope.event as Event);
  }

  private checkHeartbeat(): void {
    const worker = this.worker;
    const limitMs = this.running ? (this.options.hangAfterMs ?? 5_000) : (this.options.loadLimitMs ?? 60_000);
    if (!worker || this.hung === worker || this.now() - this.lastBeatMs <= limitMs) return;
    this.hung = worker;
    // terminate() interrupts even a loop that never yields; its exit is then reported as a hang.
    void worker.terminate();
  }

  private crashed(failure: {kind: WorkerCrashKind; detail: string}): void {
    const lostInFlight = this.inFlight;
    this.worker = null;
    this.running = false;
    this.inFlight = 0;
    if (this.stopping) return;
    if (this.readyWaiter) {
      // The first worker never became ready (a module that does not load): the start fails loudly.
      this.readyWaiter(new Error(`${this.options.name}: the worker ended before it was ready (${failure.detail})`));
      this.readyWaiter = null;
      return;
    }
    if (this.now() - this.startedAtMs >= this.backoff.stableMs) this.nextPauseMs = this.backoff.firstMs;
    const restartInMs = this.nextPauseMs;
    this.nextPauseMs = Math.min(this.backoff.maxMs, this.nextPauseMs * 2);
    this.counts.crashes[failure.kind]++;
    this.counts.lostInCrash += lostInFlight;
    this.counts.lastCrash = {...failure, atMs: Date.now()};
    const crash: WorkerCrash = {name: this.options.name, ...failure, inFlight: lostInFlight, restartInMs};
    this.options.logger.error("a supervised parser worker ended; restarting it", {...crash});
    this.options.onCrash?.(crash);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopping) this.spawn();
    }, restartInMs);
  }
}

/** Inside a worker: the `data` its supervisor was given. */
export function supervisedWorkerData<T>(): T {
  return (workerData as {data: T}).data;
}

/**
 * Inside a worker: takes each piece of work posted by the supervisor and hands it to `handle`,
 * with `emit` to send events back; beats the heartbeat. A throw out of `handle` (sync or async)
 * ends the worker on purpose: its state may be broken, and the supervisor starts a fresh one.
 */
export function serveSupervisedWork<Work, Event>(
  handle: (work: Work, emit: (event: Event) => void) => void | Promise<void>
): void {
  if (isMainThread || !parentPort) throw new Error("serveSupervisedWork runs only inside a supervised worker");
  const port = parentPort;
  const emit = (event: Event) => port.postMessage({kind: "event", event});
  port.on("message", (message: {kind: "work"; work: Work}) => {
    const done = () => port.postMessage({kind: "done"});
    const result = handle(message.work, emit);
    if (result instanceof Promise)
      result.then(done, (error: unknown) => {
        throw error;
      });
    else done();
  });
  const {heartbeatMs} = workerData as {heartbeatMs: number};
  setInterval(() => port.postMessage({kind: "beat"}), heartbeatMs);
  port.postMessage({kind: "ready"});
}
