// One storm client process, spawned by bench/storm.bench.mjs: its share of the storm's connections,
// every one opened at the same moment, each sending its alerts one after another on one kept-alive
// connection, as a PLC's HTTP client does. In its own process (pinned away from the gateway's core
// when the bench can), so its CPU is not the gateway's.
//
// Protocol (IPC): run as JSON in argv[2]; it answers {ready}; on {go} it opens every connection at
// once and answers {result} when each has had its answers, then exits. Latencies are measured per
// alert from the moment its request was started, the first one including the connect: a device
// left waiting in the listen queue is waiting for its answer.

import http from "node:http";
import {performance} from "node:perf_hooks";
import {mainThreadSchedule} from "./proc-stat.mjs";

const run = JSON.parse(process.argv[2]);
const {port, path, headers, connections, alerts, body, serialMark, firstSerial, timeoutMs} = run;

/** Sends one request on `agent`; resolves with its status and headers, or the error that ended it. */
function send(agent, payload, connected = {at: null}) {
  return new Promise((resolveAnswer) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        agent,
        headers: {...headers, "content-type": "application/json", "content-length": payload.length}
      },
      (res) => {
        res.resume();
        res.on("end", () => resolveAnswer({status: res.statusCode, retryAfter: res.headers["retry-after"] ?? null}));
      }
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error("timeout")));
    // When a new connection's handshake completed (its request is written right after).
    req.once("socket", (socket) => {
      if (socket.connecting) socket.once("connect", () => (connected.at = performance.now()));
    });
    req.on("error", (error) => resolveAnswer({status: 0, error: error.code ?? error.message}));
    req.end(payload);
  });
}

async function connection(index, share, serial, result) {
  const agent = new http.Agent({keepAlive: true, maxSockets: 1});
  for (let i = 0; i < share; i++) {
    const payload = Buffer.from(body.replace(serialMark, String(serial + i).padStart(serialMark.length, "0")));
    const startedAt = performance.now();
    const connected = {at: null};
    const answer = await send(agent, payload, connected);
    const endedAt = performance.now();
    result.firstSentAt = Math.min(result.firstSentAt, performance.timeOrigin + startedAt);
    result.lastAnsweredAt = Math.max(result.lastAnsweredAt, performance.timeOrigin + endedAt);
    const key = answer.status === 0 ? `error ${answer.error}` : String(answer.status);
    result.statuses[key] = (result.statuses[key] ?? 0) + 1;
    if (answer.status >= 200 && answer.status < 300) {
      result.latencies.push(endedAt - startedAt);
      // A connection's first request also waited for the connect: apart, it shows the accept's share of the tail.
      if (i === 0) {
        result.firstLatencies.push(endedAt - startedAt);
        if (connected.at !== null) result.connectLatencies.push(connected.at - startedAt);
      }
    } else if (answer.status === 503 && answer.retryAfter !== null) result.refusedWithRetryAfter++;
  }
  agent.destroy();
}

async function storm() {
  const scheduleBefore = mainThreadSchedule(process.pid);
  const result = {
    latencies: [],
    firstLatencies: [],
    connectLatencies: [],
    statuses: {},
    refusedWithRetryAfter: 0,
    firstSentAt: Infinity,
    lastAnsweredAt: 0
  };
  // Alerts dealt out as evenly as they go; each connection gets its own block of serials.
  const base = Math.floor(alerts / connections);
  const extra = alerts % connections;
  let serial = firstSerial;
  const jobs = [];
  for (let index = 0; index < connections; index++) {
    const share = base + (index < extra ? 1 : 0);
    jobs.push(connection(index, share, serial, result));
    serial += share;
  }
  await Promise.all(jobs);
  const scheduleAfter = mainThreadSchedule(process.pid);
  result.schedule = {
    runS: scheduleAfter.runS - scheduleBefore.runS,
    waitS: scheduleAfter.waitS - scheduleBefore.waitS
  };
  process.send({result}, () => process.exit(0));
}

process.on("message", (message) => {
  if (message.go) void storm();
});
process.send({ready: true});
