// One storm client process, spawned by bench/storm.bench.mjs: its share of the storm's connections,
// every one opened at the same moment, each sending its alerts one after another on one kept-alive
// connection, as a PLC's HTTP client does. In its own process (pinned away from the gateway's core
// when the bench can), so its CPU is not the gateway's.
//
// Lean on purpose, so that the client cannot be where a tail comes from: raw TCP sockets, every
// request built before the storm (each alert distinct), the first request written in the same turn
// as its connection's handshake completes and each next one in the turn its answer's last byte
// arrived, answers read by their status line and Content-Length alone: its two processes use about
// 0.5 s of a core for the 20,000 storm (the node:http client's four used 2.3 s).
//
// Protocol (IPC): run as JSON in argv[2]; it answers {ready}; on {go} it opens every connection at
// once and answers {result} when each has had its answers, then exits. Per request it records when
// its bytes were handed to the socket and when its answer's last byte arrived; per connection also
// when connect() was called and its local port (to join with the gateway's probe). Times are ms
// since the epoch (performance.timeOrigin + now()), comparable across processes.

import net from "node:net";
import {performance} from "node:perf_hooks";
import {mainThreadSchedule} from "./proc-stat.mjs";

const run = JSON.parse(process.argv[2]);
const {port, path, headers, connections, alerts, body, serialMark, firstSerial, timeoutMs} = run;
const now = () => performance.timeOrigin + performance.now();
const HEAD_END = Buffer.from("\r\n\r\n");

/** One request's bytes: the same head for all, the body with this alert's own serial. */
function requestBytes(serial) {
  const payload = body.replace(serialMark, String(serial).padStart(serialMark.length, "0"));
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(payload)}`
  ];
  return Buffer.from(`${head.join("\r\n")}\r\n\r\n${payload}`);
}

/**
 * Status, Retry-After presence, the whole answer's length and whether the server closes, once the
 * head is in `buffer`; null while it is not. An answer without Content-Length is not one this API gives.
 */
function parseHead(buffer) {
  const end = buffer.indexOf(HEAD_END);
  if (end === -1) return null;
  const head = buffer.toString("latin1", 0, end);
  const status = Number(head.slice(9, 12));
  const length = head.match(/\r\ncontent-length:\s*(\d+)/i);
  if (!length) throw new Error(`an answer without Content-Length: ${head}`);
  return {
    status,
    retryAfter: /\r\nretry-after:/i.test(head),
    close: /\r\nconnection:\s*close/i.test(head),
    total: end + HEAD_END.length + Number(length[1])
  };
}

const result = {
  // Per request answered: [sentAt, answeredAt, status, 1 if its connection's first]; per connection: its port and its first request's times.
  sends: [],
  connections: [],
  statuses: {},
  refusedWithRetryAfter: 0
};

function count(key) {
  result.statuses[key] = (result.statuses[key] ?? 0) + 1;
}

/** A connection's share of the storm, sent one after another; reconnects if the server closes it. */
function connection(requests, done) {
  if (requests.length === 0) return done();
  let next = 0;
  let sentAt = 0;
  let buffer = Buffer.alloc(0);
  let head = null;
  let failure = null;
  const record = {
    localPort: null,
    connectCalledAt: now(),
    connectedAt: null,
    firstSentAt: null,
    firstAnsweredAt: null,
    firstStatus: null
  };
  result.connections.push(record);

  const finish = (socket) => {
    socket.end();
    done();
  };
  const send = (socket) => {
    sentAt = now();
    record.firstSentAt ??= sentAt;
    socket.write(requests[next]);
  };
  const answered = (status, retryAfter) => {
    const answeredAt = now();
    if (next === 0) Object.assign(record, {firstAnsweredAt: answeredAt, firstStatus: status});
    result.sends.push([sentAt, answeredAt, status, next === 0 ? 1 : 0]);
    count(String(status));
    if (status === 503 && retryAfter) result.refusedWithRetryAfter++;
    next++;
  };
  const open = () => {
    const socket = net.connect({host: "127.0.0.1", port, noDelay: true});
    let inFlight = true;
    socket.setTimeout(timeoutMs);
    socket.once("connect", () => {
      record.connectedAt ??= now();
      record.localPort ??= socket.localPort;
      send(socket);
    });
    socket.on("data", (chunk) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      head ??= parseHead(buffer);
      if (head === null || buffer.length < head.total) return;
      const {status, retryAfter, close, total} = head;
      buffer = buffer.subarray(total);
      head = null;
      answered(status, retryAfter);
      if (next === requests.length) {
        inFlight = false;
        finish(socket);
      } else if (close) {
        inFlight = false;
        socket.destroy();
        open();
      } else send(socket);
    });
    socket.on("timeout", () => socket.destroy(new Error("timeout")));
    socket.on("error", (error) => (failure = error.code ?? error.message));
    socket.on("close", () => {
      if (!inFlight) return;
      // The request in flight is lost on this connection: counted, and the next goes on a new one.
      count(`error ${failure ?? "closed by the server"}`);
      failure = null;
      buffer = Buffer.alloc(0);
      head = null;
      next++;
      if (next < requests.length) open();
      else done();
    });
  };
  open();
}

function storm(shares) {
  const scheduleBefore = mainThreadSchedule(process.pid);
  let open = shares.length;
  const finished = () => {
    if (--open > 0) return;
    const scheduleAfter = mainThreadSchedule(process.pid);
    result.schedule = {
      runS: scheduleAfter.runS - scheduleBefore.runS,
      waitS: scheduleAfter.waitS - scheduleBefore.waitS
    };
    process.send({result}, () => process.exit(0));
  };
  for (const requests of shares) connection(requests, finished);
}

// Alerts dealt out as evenly as they go; each connection gets its own block of serials. Built before {ready}.
const base = Math.floor(alerts / connections);
const extra = alerts % connections;
const shares = [];
let serial = firstSerial;
for (let index = 0; index < connections; index++) {
  const share = base + (index < extra ? 1 : 0);
  shares.push(Array.from({length: share}, (_, i) => requestBytes(serial + i)));
  serial += share;
}

process.on("message", (message) => {
  if (message.go) storm(shares);
});
process.send({ready: true});
