// The bare baseline for `npm run bench:ingest`: plain node:http + better-sqlite3, doing the same
// durable writes per alert as Klaxon's POST /api/v1/notifications/send (a notifications row, an
// escalations row with the policy snapshot, an audit row and an events row with the event body),
// with the same storage settings (WAL, synchronous=NORMAL with the WAL flushed by fsync on the
// thread pool after each commit, one flush at a time, foreign keys, no automatic checkpoint,
// PASSIVE checkpoints on a worker thread every second) and the same group commit (writes are
// queued; everything queued is committed in one transaction per event-loop turn via setImmediate,
// at most 512 per transaction). It answers 202 only after the commit is flushed to disk.
//
// What it deliberately leaves out is what the benchmark measures: the framework (Express 5 +
// Ts.ED routing, middlewares, parameter injection), ajv schema validation, API-key
// authentication and rate limiting, the recipient lookup, the request log, the per-write
// savepoint and the read-back of the long form. It validates only the three required fields.
//
// Env: BASELINE_PORT (default 0 = any), BASELINE_DATA_DIR (required). Listens on 127.0.0.1 only.
// Prints one line `listening <port>` on stdout when ready. SIGTERM: stops accepting, commits what
// is queued, checkpoints, closes the database and exits 0.

import http from "node:http";
import {mkdirSync} from "node:fs";
import {join} from "node:path";
import {createRequire} from "node:module";
import {Worker} from "node:worker_threads";
import {openJournal, walFlusher} from "./baseline-journal.mjs";

const dataDir = process.env.BASELINE_DATA_DIR;
if (!dataDir) {
  console.error("BASELINE_DATA_DIR is required");
  process.exit(2);
}
const port = Number(process.env.BASELINE_PORT ?? 0);
const BODY_LIMIT_BYTES = 64 * 1024;
const MAX_BATCH = 512;
const CHECKPOINT_INTERVAL_MS = 1000;
const PRIORITIES = new Set(["low", "normal", "high", "critical"]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Where the writes run: on this thread, as Klaxon's journal does today (main, the default), or on a
// writer thread that owns the connection (worker): the ceiling of taking Klaxon's journal off its
// main thread, the lever its benchmarks name. The writer commits one batch at a time, the next
// batch being everything queued meanwhile, and flushes the WAL on its own thread.
const WRITER = process.env.BASELINE_WRITER === "worker" ? "worker" : "main";

mkdirSync(dataDir, {recursive: true, mode: 0o700});
const dbPath = join(dataDir, "baseline.sqlite");
const {db, commitBatch} = openJournal(dbPath);
const afterCommit = walFlusher(dbPath);
const writer =
  WRITER === "worker"
    ? new Worker(new URL("./baseline-writer.worker.mjs", import.meta.url), {workerData: {dbPath}})
    : null;
// The batches handed to the writer and not answered yet, oldest first: it answers in order.
const inFlight = [];
writer?.on("message", ({results, error}) => {
  const batch = inFlight.shift();
  batch.forEach((item, index) => (error ? item.done(new Error(error)) : item.done(null, results[index])));
});

// Same checkpoint policy as Klaxon's Checkpointer: PASSIVE, on a worker thread, every second.
const checkpointer = new Worker(
  `const {parentPort, workerData} = require("node:worker_threads");
   const Database = require(workerData.betterSqlite3);
   const db = new Database(workerData.path);
   db.pragma("busy_timeout = 1000");
   const timer = setInterval(() => { try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {} }, workerData.intervalMs);
   parentPort.on("message", () => { clearInterval(timer); db.close(); parentPort.postMessage("stopped"); });`,
  {
    eval: true,
    workerData: {
      path: dbPath,
      intervalMs: CHECKPOINT_INTERVAL_MS,
      betterSqlite3: createRequire(import.meta.url).resolve("better-sqlite3")
    }
  }
);
checkpointer.unref();

// Group commit, as in src/store/journal/journal.ts: queue, then one transaction per turn.
let queue = [];
let flushScheduled = false;

function flush() {
  flushScheduled = false;
  const batch = queue.length > MAX_BATCH ? queue.splice(0, MAX_BATCH) : queue;
  if (batch === queue) queue = [];
  if (queue.length > 0) schedule();
  if (batch.length === 0) return;
  if (writer) {
    inFlight.push(batch);
    writer.postMessage({inputs: batch.map((item) => item.input), nowMs: Date.now()});
    return;
  }
  let results;
  try {
    results = commitBatch(
      batch.map((item) => item.input),
      Date.now()
    );
  } catch (error) {
    for (const item of batch) item.done(error);
    return;
  }
  afterCommit(() => batch.forEach((item, index) => item.done(null, results[index])));
}

function schedule() {
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

function enqueue(input, done) {
  queue.push({input, done});
  schedule();
}

function answer(response, status, body, headers = {}) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...headers
  });
  response.end(text);
}

function problem(response, status, detail) {
  answer(response, status, {status, detail});
}

function validate(body) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "the body must be a JSON object";
  if (typeof body.recipient_uuid !== "string" || !UUID.test(body.recipient_uuid))
    return "recipient_uuid must be a UUID";
  if (typeof body.message !== "string" || body.message.trim() === "" || body.message.length > 4000)
    return "message must be 1 to 4000 characters";
  if (!PRIORITIES.has(body.priority)) return "priority must be one of low, normal, high, critical";
  return null;
}

function send(request, response) {
  const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") return problem(response, 415, "the body must be application/json");
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  request.on("data", (chunk) => {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) tooLarge = true;
    else chunks.push(chunk);
  });
  request.on("end", () => {
    if (tooLarge) return problem(response, 413, "body over 64 KiB");
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
    } catch {
      return problem(response, 400, "malformed JSON");
    }
    const invalid = validate(body);
    if (invalid) return problem(response, 400, invalid);
    enqueue(body, (error, result) => {
      if (error) return problem(response, 503, `cannot commit: ${error.message}`);
      answer(response, 202, result, {Location: `/api/v1/notifications/${result.notification_uuid}`});
    });
  });
}

const server = http.createServer((request, response) => {
  if (request.method === "POST" && request.url === "/api/v1/notifications/send") return send(request, response);
  if (request.method === "GET" && request.url === "/healthz") return answer(response, 200, {status: "ok"});
  request.resume();
  problem(response, 404, "not found");
});

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  server.close(async () => {
    while (queue.length > 0 || flushScheduled || inFlight.length > 0)
      await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => {
      checkpointer.once("message", resolve);
      checkpointer.once("exit", resolve);
      checkpointer.postMessage("stop");
    });
    await checkpointer.terminate();
    if (writer) await writer.terminate();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    process.exit(0);
  });
  server.closeIdleConnections();
});
