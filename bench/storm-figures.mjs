// The storm's figures for bench/storm.bench.mjs: its latencies from the clients' records
// (bench/storm-generator.mjs) and, joined with the gateway's probe (bench/storm-probe.mjs) by the
// client's port, where each connection's first request spent its time (the client's connect, the
// gateway's accept, the read of its request, the gateway's work on it, the answer's way back); the
// gateway's own figures from /metrics; the kernel's listen-queue counters.

import {readFileSync} from "node:fs";
import {request, SEND_PATH} from "./harness.mjs";

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function spread(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  return {n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN};
}

const is2xx = (status) => status >= 200 && status < 300;

/**
 * The sends' latencies, 2xx only: from the moment each request's bytes were handed to the socket
 * (the verdict), and the older figure from the moment its connection's connect() was called for a
 * connection's first request (the connect and the client's own delay in writing it included);
 * each connection's first request apart; when the storm began and its last answer came.
 */
export function sendFigures(results) {
  const sends = results.flatMap((result) => result.sends);
  const connections = results.flatMap((result) => result.connections);
  const fromSend = sends.filter(([, , status]) => is2xx(status)).map(([sentAt, answeredAt]) => answeredAt - sentAt);
  const firsts = connections.filter((c) => is2xx(c.firstStatus));
  const firstFromSend = firsts.map((c) => c.firstAnsweredAt - c.firstSentAt);
  const firstFromConnect = firsts.map((c) => c.firstAnsweredAt - c.connectCalledAt);
  // The older figure: a first request's latency counted from its connect() call; every other one from its send.
  const fromConnect = [
    ...sends
      .filter(([, , status, first]) => is2xx(status) && !first)
      .map(([sentAt, answeredAt]) => answeredAt - sentAt),
    ...firstFromConnect
  ];
  const startedAt = Math.min(...connections.map((c) => c.connectCalledAt));
  return {
    accepted: fromSend.length,
    fromSend: spread(fromSend),
    fromConnect: spread(fromConnect),
    firstFromSend: spread(firstFromSend),
    firstFromConnect: spread(firstFromConnect),
    handshake: spread(connections.map((c) => c.connectedAt - c.connectCalledAt)),
    // How late after the storm began each connection wrote its first request: the client's own delay.
    firstWritten: spread(connections.map((c) => c.firstSentAt - startedAt)),
    startedAt,
    lastAnsweredAt: Math.max(...sends.map(([, answeredAt]) => answeredAt))
  };
}

/**
 * Each connection's first request, stage by stage (ms), joined with the gateway's probe on the
 * client's port: null without a probe. `accept` is from the client writing its request to the
 * gateway accepting the connection (the request waits in the kernel meanwhile), `read` from the
 * accept to its headers parsed, `work` from there to the answer handed to the kernel, `back` from
 * there to its last byte at the client; `parsedSinceStart` when the gateway parsed it, from the
 * storm's start.
 */
export function firstRequestStages(results, probe, startedAt) {
  if (!probe) return null;
  const atGateway = new Map(probe.connections.map((record) => [record[0], record]));
  const stages = {accept: [], read: [], work: [], back: [], acceptedSinceStart: [], parsedSinceStart: []};
  let joined = 0;
  for (const c of results.flatMap((result) => result.connections)) {
    const record = atGateway.get(c.localPort);
    if (!record || c.firstAnsweredAt === null) continue;
    const [, acceptedAt, parsedAt, finishedAt] = record;
    joined++;
    stages.accept.push(acceptedAt - c.firstSentAt);
    stages.read.push(parsedAt - acceptedAt);
    stages.work.push(finishedAt - parsedAt);
    stages.back.push(c.firstAnsweredAt - finishedAt);
    stages.acceptedSinceStart.push(acceptedAt - startedAt);
    stages.parsedSinceStart.push(parsedAt - startedAt);
  }
  return {joined, ...Object.fromEntries(Object.entries(stages).map(([name, values]) => [name, spread(values)]))};
}

/** Listen-queue overflows and drops so far in this network namespace (/proc/net/netstat). */
export function listenQueueCounters() {
  const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const header = lines.find((line) => line.startsWith("TcpExt:") && line.includes("ListenOverflows")).split(/\s+/);
  const values = lines[lines.indexOf(header.join(" ")) + 1].split(/\s+/);
  const field = (name) => Number(values[header.indexOf(name)]);
  return {overflows: field("ListenOverflows"), drops: field("ListenDrops")};
}

/** The gateway's journal and event-loop figures from /metrics (its loop-delay gauges cover the time since the previous scrape). */
export async function scrape(port) {
  const {text} = await request(port, "GET", "/metrics");
  const value = (name) => Number((text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m")) ?? [])[1]);
  return {
    commits: value("klaxon_journal_commits_total"),
    writes: value("klaxon_journal_writes_total"),
    loopMaxMs: value("nodejs_eventloop_delay_max_seconds") * 1000,
    loopP99Ms: value("nodejs_eventloop_delay_p99_seconds") * 1000,
    sendBuckets: sendDurationBuckets(text)
  };
}

/** The send route's 2xx request-duration histogram (seconds, cumulative counts by upper bound), from /metrics. */
function sendDurationBuckets(text) {
  const buckets = new Map();
  const line = /^klaxon_http_request_duration_seconds_bucket\{([^}]*)\} (\S+)$/gm;
  for (const [, labels, count] of text.matchAll(line)) {
    if (!labels.includes(`route="${SEND_PATH}"`) || !/status="2\d\d"/.test(labels)) continue;
    const le = labels.match(/le="([^"]+)"/)[1];
    buckets.set(le, (buckets.get(le) ?? 0) + Number(count));
  }
  return buckets;
}

/**
 * The gateway's own time for the storm's sends (from the door's first step to the answer, the
 * /metrics histogram): the bucket bound under which `share` of them finished, in ms.
 */
export function serverBound(before, after, share) {
  const counts = [...after].map(([le, count]) => [
    Number(le === "+Inf" ? Infinity : le),
    count - (before.get(le) ?? 0)
  ]);
  counts.sort((a, b) => a[0] - b[0]);
  const total = counts.at(-1)?.[1] ?? 0;
  const found = counts.find(([, count]) => count >= share * total);
  return found ? found[0] * 1000 : NaN;
}
