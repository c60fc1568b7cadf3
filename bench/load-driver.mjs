// The load driver of the load benchmarks: autocannon in separate generator processes
// (bench/load-generator.mjs), never in the bench process itself, so that the client's work is
// visible and measured. Until 2026-11-25 autocannon ran in the bench process, and every target
// landed near the same 8,000 requests/s: the ceiling of one JS thread generating load, not the
// servers' (docs/benchmarks.md).
//
// Each run reports, beside the rate and latencies: the CPU seconds of the server under test (when
// its pid is given), of each generator, and of the whole machine (from /proc/stat, so the work of
// other processes on a shared machine shows); and flags the run "generator-bound" when a generator
// used nearly a whole core, the most one autocannon process can use.
//
// Env: BENCH_GENERATORS (default 2: generator processes sharing BENCH_CONNECTIONS).

import {fork} from "node:child_process";
import {cpus} from "node:os";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import {envNumber} from "./harness.mjs";
import {cpuSeconds, machineCpuSeconds} from "./proc-stat.mjs";

const GENERATOR_ENTRY = join(dirname(fileURLToPath(import.meta.url)), "load-generator.mjs");
export const GENERATORS = Math.round(envNumber("BENCH_GENERATORS", 2));
/** A generator that used this share of one core or more was the limit, not the server. */
export const GENERATOR_BOUND_SHARE = 0.85;

/** Put into a body where each request's serial goes: the generators write a 9-digit serial there. */
export const SERIAL_MARK = "#########";
const SERIALS_PER_GENERATOR_RUN = 2_000_000;
// Block 0 is left to probes (withSerial(body, 0)), so no load request repeats a probe's alert.
let nextSerialBlock = 1;

/** The body with its serial mark filled in (a probe request, or the body shown in a report). */
export function withSerial(body, serial) {
  return body.replace(SERIAL_MARK, String(serial).padStart(SERIAL_MARK.length, "0"));
}

function startGenerator(run) {
  const child = fork(GENERATOR_ENTRY, [JSON.stringify(run)], {stdio: ["ignore", "inherit", "inherit", "ipc"]});
  const ready = new Promise((resolveReady, reject) => {
    child.once("message", (message) =>
      message.ready ? resolveReady() : reject(new Error(`generator said ${JSON.stringify(message)}`))
    );
    child.once("exit", (code) => reject(new Error(`a load generator exited with ${code} before it was ready`)));
  });
  const result = new Promise((resolveResult, reject) => {
    child.on("message", (message) => message.result && resolveResult(message.result));
    child.once("exit", (code) => code !== 0 && reject(new Error(`a load generator exited with ${code}`)));
  });
  return {child, ready, result};
}

/** p-th percentile (0-100) of merged [bucket, count] pairs. */
function percentile(sortedBuckets, total, p, bucketMs) {
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const [bucket, count] of sortedBuckets) {
    seen += count;
    if (seen >= rank) return bucket * bucketMs;
  }
  return 0;
}

function mergeLatencies(results) {
  const merged = new Map();
  for (const result of results)
    for (const [bucket, count] of result.latencies) merged.set(bucket, (merged.get(bucket) ?? 0) + count);
  const sorted = [...merged].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  const bucketMs = results[0].latencyBucketMs;
  return {
    p50: percentile(sorted, total, 50, bucketMs),
    p99: percentile(sorted, total, 99, bucketMs),
    max: sorted.length ? sorted[sorted.length - 1][0] * bucketMs : 0
  };
}

function mergeStatusCodes(results) {
  const merged = {};
  for (const result of results) {
    for (const [code, {count}] of Object.entries(result.statusCodeStats))
      merged[code] = {count: (merged[code]?.count ?? 0) + count};
  }
  return merged;
}

const sum = (results, field) => results.reduce((total, result) => total + result[field], 0);

/**
 * One load run against `path` from BENCH_GENERATORS processes sharing `connections`. `body` is
 * sent as is, or with SERIAL_MARK replaced by a serial unique to each request. Collects the
 * notification id from the Location header of every 2xx answer into `ackedIds` (for the journal
 * check). `serverPid` (optional) is the server whose CPU is measured over the same window.
 */
export async function drive({port, path, seconds, connections, headers, body, ackedIds = [], serverPid}) {
  const count = Math.min(GENERATORS, connections);
  const generators = Array.from({length: count}, (_, index) =>
    startGenerator({
      port,
      path,
      headers,
      seconds,
      body,
      serialMark: body.includes(SERIAL_MARK) ? SERIAL_MARK : null,
      firstSerial: nextSerialBlock++ * SERIALS_PER_GENERATOR_RUN,
      // Connections dealt out as evenly as they go.
      connections: Math.floor(connections / count) + (index < connections % count ? 1 : 0)
    })
  );
  await Promise.all(generators.map((generator) => generator.ready));
  // The window starts when every generator has started and been told to go, so start-up is not in it.
  const serverBefore = serverPid ? cpuSeconds(serverPid) : 0;
  const machineBefore = machineCpuSeconds();
  for (const generator of generators) generator.child.send({go: true});
  const results = await Promise.all(generators.map((generator) => generator.result));
  const serverCpuSeconds = serverPid ? cpuSeconds(serverPid) - serverBefore : null;
  const machineAfter = machineCpuSeconds();
  for (const result of results) ackedIds.push(...result.ackedIds);
  const ok = sum(results, "ok");
  const duration = Math.max(...results.map((result) => result.duration));
  const generatorShares = results.map((result) => result.cpuSeconds / result.wallSeconds);
  const generatorCpuSeconds = sum(results, "cpuSeconds");
  return {
    "2xx": ok,
    non2xx: sum(results, "non2xx"),
    errors: sum(results, "errors"),
    timeouts: sum(results, "timeouts"),
    inFlightAtStop: sum(results, "inFlightAtStop"),
    statusCodeStats: mergeStatusCodes(results),
    duration,
    alertsPerSecond: ok / duration,
    latency: mergeLatencies(results),
    cpu: {
      server: serverCpuSeconds,
      generators: generatorCpuSeconds,
      /** Each generator's CPU over its run, in cores (1.0 = a whole core). */
      generatorShares,
      generatorBound: generatorShares.some((share) => share >= GENERATOR_BOUND_SHARE),
      /** Every process on the machine, in cores: what the server and generators used plus anyone else's work. */
      machineCores:
        (machineAfter.busy - machineBefore.busy) / ((machineAfter.total - machineBefore.total) / cpus().length)
    }
  };
}
