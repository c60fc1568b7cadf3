import {readdirSync, readFileSync} from "node:fs";
import {monitorEventLoopDelay, performance, type IntervalHistogram} from "node:perf_hooks";
import type {MetricFamily} from "./exposition.js";

/** What `klaxon_build_info` labels: the package version, the running Node and, for a release, the commit it was packaged from. */
export interface BuildInfo {
  version: string;
  node: string;
  commit?: string;
}

// dist/ops/metrics/ (a release) or src/ops/metrics/ (a checkout): the install's root is three up.
const ROOT = new URL("../../../", import.meta.url);

/**
 * The version from package.json, and the commit from the RELEASE file `npm run package` writes
 * (a checkout has none, so the label is left out rather than guessed with git at run time).
 */
export function readBuildInfo(root: URL = ROOT): BuildInfo {
  const version = (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {version: string}).version;
  let commit: string | undefined;
  try {
    commit = /^commit=([0-9a-f]{7,40})$/m.exec(readFileSync(new URL("RELEASE", root), "utf8"))?.[1];
  } catch {
    commit = undefined;
  }
  return {version, node: process.version, ...(commit ? {commit} : {})};
}

// The histogram samples the loop every 20 ms; percentiles cover the time since the previous scrape.
const LOOP_RESOLUTION_MS = 20;

/**
 * The process and Node.js runtime as Prometheus' client libraries name them (process_*, nodejs_*),
 * read at scrape time from Node and Linux's /proc, plus `klaxon_build_info`.
 */
export class ProcessMetrics {
  private loopDelay: IntervalHistogram | null = null;

  constructor(private readonly build: BuildInfo) {}

  /** Starts sampling the event loop's delay; until then (and after stop) its gauges are absent. */
  start(): void {
    if (this.loopDelay) return;
    this.loopDelay = monitorEventLoopDelay({resolution: LOOP_RESOLUTION_MS});
    this.loopDelay.enable();
  }

  stop(): void {
    this.loopDelay?.disable();
    this.loopDelay = null;
  }

  families(): MetricFamily[] {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const families: MetricFamily[] = [
      {
        name: "process_cpu_seconds_total",
        type: "counter",
        help: "User and system CPU time spent, in seconds.",
        samples: [{value: (cpu.user + cpu.system) / 1e6}]
      },
      {
        name: "process_resident_memory_bytes",
        type: "gauge",
        help: "Resident memory size in bytes.",
        samples: [{value: memory.rss}]
      },
      // timeOrigin is when the process started, in ms since the epoch: no clock is read here.
      {
        name: "process_start_time_seconds",
        type: "gauge",
        help: "Start time of the process since the Unix epoch, in seconds.",
        samples: [{value: Math.round(performance.timeOrigin) / 1000}]
      },
      {
        name: "nodejs_heap_size_used_bytes",
        type: "gauge",
        help: "V8 heap in use, in bytes.",
        samples: [{value: memory.heapUsed}]
      },
      {
        name: "nodejs_heap_size_total_bytes",
        type: "gauge",
        help: "V8 heap allocated, in bytes.",
        samples: [{value: memory.heapTotal}]
      }
    ];
    const fds = openFds();
    if (fds !== null)
      families.push({name: "process_open_fds", type: "gauge", help: "Open file descriptors.", samples: [{value: fds}]});
    const maxFds = maxOpenFds();
    if (maxFds !== null)
      families.push({
        name: "process_max_fds",
        type: "gauge",
        help: "The limit on open file descriptors.",
        samples: [{value: maxFds}]
      });
    if (this.loopDelay && this.loopDelay.count > 0) {
      // The histogram holds whole intervals between samples (nanoseconds): an idle loop reads 20 ms.
      // Less the resolution, what is left is the delay.
      const seconds = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;
      families.push(
        {
          name: "nodejs_eventloop_delay_p99_seconds",
          type: "gauge",
          help: "99th percentile of the event loop's delay since the previous scrape, in seconds.",
          samples: [{value: seconds(this.loopDelay.percentile(99))}]
        },
        {
          name: "nodejs_eventloop_delay_max_seconds",
          type: "gauge",
          help: "Longest event loop delay since the previous scrape, in seconds.",
          samples: [{value: seconds(this.loopDelay.max)}]
        }
      );
      this.loopDelay.reset();
    }
    families.push({
      name: "klaxon_build_info",
      type: "gauge",
      help: "Always 1; the labels say which Klaxon and which Node run.",
      samples: [{labels: {...this.build}, value: 1}]
    });
    return families;
  }
}

/** Entries of /proc/self/fd, less the one the listing itself opened; null where there is no /proc (not Linux). */
function openFds(): number | null {
  try {
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return null;
  }
}

function maxOpenFds(): number | null {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
    return limit === undefined ? null : Number(limit);
  } catch {
    return null;
  }
}
