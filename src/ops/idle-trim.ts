import {performance, type EventLoopUtilization} from "node:perf_hooks";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";

/** How often the event loop's load is read while waiting for the gateway to go quiet. */
const CHECK_INTERVAL_MS = 5_000;
/** Quiet readings in a row before the trim: ten seconds of an idle gateway, not a lull in a storm. */
const QUIET_READINGS = 2;
/** The event loop busy at most this fraction of an interval counts as quiet (an idle gateway: ~0.001). */
const QUIET_UTILIZATION = 0.05;

export interface IdleTrimOptions {
  /** V8's full collection that gives memory back (node --expose-gc's `gc` with the last-resort flavor). */
  collect: () => void;
  /** The event loop's busy fraction (0-1) since the previous call. */
  utilization?: () => number;
  /** The resident set size in bytes, for the log line. */
  rss?: () => number;
  logger: Logger;
  intervalMs?: number;
  quietReadings?: number;
}

/** The event loop's utilization (0-1) since the previous call, or since it was made. */
function utilizationSinceLastCall(): () => number {
  let previous: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, previous);
    previous = now;
    return delta.utilization;
  };
}

/**
 * One memory-reducing collection once the started gateway is quiet (issue 36 item 2, docs/benchmarks.md
 * "Idle footprint"). Start-up (module sources, decorators, schemas, compiled validators) leaves V8's
 * heap with garbage, bytecode that only start-up ran and freed pages V8 keeps pooled; an idle
 * gateway allocates too little to run another full collection, so all of it stays resident. The
 * last-resort flavor collects until nothing more is freed, flushes that bytecode and gives the pages
 * back: about 10 MB of idle RSS for 50-300 ms of one stop-the-world pause on x64. It waits for quiet
 * readings of the event loop so the pause never lands in a storm (one that begins after it recompiles
 * what its requests run, as a fresh start does), and runs once: after a storm the heap is the storm's.
 */
export class IdleTrim {
  private readonly task: PeriodicTask;
  private readonly utilization: () => number;
  private quiet = 0;
  private trimmed = false;

  constructor(private readonly options: IdleTrimOptions) {
    this.utilization = options.utilization ?? utilizationSinceLastCall();
    this.task = new PeriodicTask(
      "idle-trim",
      options.intervalMs ?? CHECK_INTERVAL_MS,
      () => this.tick(),
      options.logger
    );
  }

  /**
   * The trim for a process started with `--expose-gc` (the systemd unit's flags), or null without
   * it (`npm start`, tests): then nothing is trimmed.
   */
  static forProcess(logger: Logger): IdleTrim | null {
    const gc = globalThis.gc;
    if (!gc) return null;
    return new IdleTrim({collect: () => gc({type: "major", execution: "sync", flavor: "last-resort"}), logger});
  }

  get done(): boolean {
    return this.trimmed;
  }

  /** One reading; the trim on the last of enough quiet ones in a row. */
  tick(): void {
    if (this.trimmed) return;
    this.quiet = this.utilization() <= QUIET_UTILIZATION ? this.quiet + 1 : 0;
    if (this.quiet < (this.options.quietReadings ?? QUIET_READINGS)) return;
    this.trimmed = true;
    void this.task.stop();
    const rss = this.options.rss ?? (() => process.memoryUsage.rss());
    const before = rss();
    const started = performance.now();
    this.options.collect();
    const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
    this.options.logger.info("idle: memory given back after start-up", {
      rss_mb_before: mb(before),
      rss_mb_after: mb(rss()),
      pause_ms: Math.round(performance.now() - started)
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
