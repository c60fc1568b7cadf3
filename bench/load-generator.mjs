// One load generator process, forked by bench/load-driver.mjs: an autocannon run with its share of
// the connections, in its own process so its CPU is its own (and measurable), not the bench's.
//
// Protocol (IPC): the parent forks it with the run as JSON in argv[2]; it answers {ready}; on
// {go} it runs and answers {result}, then exits. The result carries its 2xx latencies as a sparse
// histogram (0.1 ms buckets), so the parent can merge the generators' latencies exactly.

import autocannon from "autocannon";
import {cpuSeconds} from "./proc-stat.mjs";

const run = JSON.parse(process.argv[2]);
const {port, path, headers, connections, seconds, body, serialMark, firstSerial} = run;
// A fixed-width serial replaces the mark in the body, so each request carries a different alert
// and every body has the same length.
const serialText = (serial) => String(serial).padStart(serialMark.length, "0");
const LATENCY_BUCKET_MS = 0.1;

function start() {
  const latencies = new Map();
  const ackedIds = [];
  const clients = [];
  let serial = firstSerial;
  const perRequest = serialMark
    ? [{method: "POST", path, setupRequest: (req) => ({...req, body: body.replace(serialMark, serialText(serial++))})}]
    : undefined;
  const cpuBefore = cpuSeconds(process.pid);
  const startedAt = process.hrtime.bigint();
  const instance = autocannon(
    {
      url: `http://127.0.0.1:${port}${path}`,
      method: "POST",
      headers: {"content-type": "application/json", ...headers},
      body,
      requests: perRequest,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 10,
      setupClient: (client) => {
        const counts = {sent: 0, answered: 0};
        clients.push(counts);
        client.on("request", () => counts.sent++);
        client.on("response", (status, _bytes, ms) => {
          counts.answered++;
          if (status < 200 || status > 299) return;
          const bucket = Math.round(ms / LATENCY_BUCKET_MS);
          latencies.set(bucket, (latencies.get(bucket) ?? 0) + 1);
        });
        // The notification id from the Location header of every 2xx answer, for the journal check.
        client.on("headers", ({statusCode, headers: raw}) => {
          if (statusCode < 200 || statusCode > 299) return;
          for (let i = 0; i < raw.length; i += 2) {
            if (raw[i].length === 8 && raw[i].toLowerCase() === "location") {
              ackedIds.push(raw[i + 1].slice(raw[i + 1].lastIndexOf("/") + 1));
              break;
            }
          }
        });
      }
    },
    (error, result) => {
      if (error) throw error;
      process.send(
        {
          result: {
            ok: result["2xx"],
            non2xx: result.non2xx,
            errors: result.errors,
            timeouts: result.timeouts,
            statusCodeStats: result.statusCodeStats,
            duration: result.duration,
            // Autocannon drops its connections at the end with a request outstanding on each: the
            // server may commit those, but nobody hears the answer.
            inFlightAtStop: clients.reduce((sum, counts) => sum + counts.sent - counts.answered, 0),
            cpuSeconds: cpuSeconds(process.pid) - cpuBefore,
            wallSeconds: Number(process.hrtime.bigint() - startedAt) / 1e9,
            latencyBucketMs: LATENCY_BUCKET_MS,
            latencies: [...latencies],
            ackedIds
          }
        },
        () => process.exit(0)
      );
    }
  );
  instance.on("error", (error) => {
    throw error;
  });
}

process.on("message", (message) => {
  if (message.go) start();
});
process.send({ready: true});
