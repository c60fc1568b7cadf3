// The gateway's side of a storm connection, for bench/storm.bench.mjs only: loaded into the gateway
// with `node --import` by the bench (never by the unit), it times each connection's first request
// at the server: when the connection was accepted (node:http's "connection" event, emitted as libuv
// accepts it), when its first request's headers were parsed ("request", in the same turn as the read
// that brought them), and when its answer was handed to the kernel (the response's "finish"). Every
// time is ms since the epoch (performance.timeOrigin + now(), comparable with the clients' across
// processes), keyed by the client's port, so the bench can join them with its client's own times.
//
// On SIGUSR2 it writes what it has to BENCH_STORM_PROBE_FILE (JSON) and keeps going. Cost while the
// gateway runs: one wrapper around http.Server's emit and, per connection, one small record and two
// listeners on its first request.

import {writeFileSync} from "node:fs";
import http from "node:http";
import {performance} from "node:perf_hooks";

const file = process.env.BENCH_STORM_PROBE_FILE;
if (!file) throw new Error("bench/storm-probe.mjs needs BENCH_STORM_PROBE_FILE");

const now = () => performance.timeOrigin + performance.now();
/** [clientPort, acceptedAt, firstRequestAt, firstAnsweredAt] per connection, in accept order. */
const connections = [];
const bySocket = new WeakMap();

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function probedEmit(event, ...args) {
  if (event === "connection") {
    const record = [args[0].remotePort, now(), null, null];
    connections.push(record);
    bySocket.set(args[0], record);
  } else if (event === "request") {
    const record = bySocket.get(args[0].socket);
    if (record && record[2] === null) {
      record[2] = now();
      args[1].once("finish", () => (record[3] = now()));
    }
  }
  return emit.call(this, event, ...args);
};

process.on("SIGUSR2", () => writeFileSync(file, JSON.stringify({connections})));
