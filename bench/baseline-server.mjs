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
import {fsync, mkdirSync, openSync} from "node:fs";
import {join} from "node:path";
import {randomBytes} from "node:crypto";
import {createRequire} from "node:module";
import {Worker} from "node:worker_threads";
import Database from "better-sqlite3";

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

// The subset of Klaxon's schema (src/store/journal/migrations.ts, as migrated to the latest
// version) that an accepted alert writes to, indexes included (they are part of the cost of each
// insert).
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS notifications (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    target_uuid TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    message TEXT NOT NULL,
    priority TEXT NOT NULL,
    source TEXT,
    dedup_key TEXT,
    link TEXT,
    service TEXT,
    environment TEXT,
    occurrences INTEGER NOT NULL DEFAULT 1,
    channels_planned TEXT NOT NULL,
    escalation_chain_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    acknowledged_via TEXT,
    ack_note TEXT,
    resolved_at TEXT,
    api_key_id TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS notifications_status ON notifications(status, id);
  CREATE INDEX IF NOT EXISTS notifications_target ON notifications(target_uuid, id);
  CREATE UNIQUE INDEX IF NOT EXISTS notifications_open_dedup ON notifications(target_uuid, dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('queued', 'notifying');
  CREATE INDEX IF NOT EXISTS notifications_dedup ON notifications(dedup_key, id) WHERE dedup_key IS NOT NULL;

  CREATE TABLE IF NOT EXISTS escalations (
    id TEXT PRIMARY KEY,
    notification_id TEXT NOT NULL UNIQUE REFERENCES notifications(id),
    policy TEXT NOT NULL,
    step INTEGER NOT NULL DEFAULT 0,
    steps_total INTEGER NOT NULL,
    next_step_at TEXT,
    generation INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    grouped_with TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS escalations_due ON escalations(next_step_at) WHERE next_step_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS escalations_grouped ON escalations(grouped_with) WHERE grouped_with IS NOT NULL;

  CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT,
    action TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    source TEXT,
    detail TEXT NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS audit_subject ON audit(subject_id, seq);
  CREATE INDEX IF NOT EXISTS audit_action ON audit(action, seq);
  CREATE INDEX IF NOT EXISTS audit_at ON audit(at);

  CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    notification_id TEXT,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS events_notification ON events(notification_id);
`;

mkdirSync(dataDir, {recursive: true, mode: 0o700});
const dbPath = join(dataDir, "baseline.sqlite");
const db = new Database(dbPath);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("foreign_keys = ON");
db.pragma("busy_timeout = 5000");
db.pragma("wal_autocheckpoint = 0");
db.exec(SCHEMA);

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

const insertNotification =
  db.prepare(`INSERT INTO notifications (id, status, target_uuid, target_kind, message, priority, source, dedup_key, link, service,
  environment, occurrences, channels_planned, escalation_chain_id, created_at, updated_at, acknowledged_at, acknowledged_by, acknowledged_via, ack_note,
  resolved_at, api_key_id) VALUES (?, 'queued', ?, 'recipient', ?, ?, ?, NULL, NULL, NULL, NULL, 1, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?)`);
const insertEscalation =
  db.prepare(`INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state)
  VALUES (?, ?, ?, 0, ?, ?, 0, 'running')`);
const insertAudit =
  db.prepare(`INSERT INTO audit (at, actor_type, actor_id, action, subject_type, subject_id, source, detail)
  VALUES (?, 'api_key', ?, 'notification.accepted', 'notification', ?, ?, ?)`);
const insertEvent = db.prepare(
  `INSERT INTO events (id, type, notification_id, created_at, body) VALUES (?, 'escalation.started', ?, ?, ?)`
);

// Time-sortable ids shaped like Klaxon's (prefix + 26 Crockford base32 characters).
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const randomPart = Array.from(randomBytes(12), (byte) => ALPHABET[byte % 32]).join("");
let counter = 0;
function newId(prefix, ms) {
  let time = "";
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  let count = "";
  let n = counter++;
  for (let i = 0; i < 4; i++) {
    count = ALPHABET[n % 32] + count;
    n = Math.floor(n / 32);
  }
  return `${prefix}_${time}${randomPart}${count}`;
}

const API_KEY_ID = "baseline";
const CHANNELS = ["email"];

/** The rows of one accepted alert, built like NotificationsService.send() builds them. */
function writeAlert(input, nowMs) {
  const now = new Date(nowMs).toISOString();
  const id = newId("notif", nowMs);
  const chainId = newId("esc", nowMs);
  const eventId = newId("evt", nowMs);
  const message = input.message.trim();
  const source = typeof input.source === "string" ? input.source : null;
  const policy = {
    target: {uuid: input.recipient_uuid, kind: "recipient", name: "Bench"},
    priority: input.priority,
    strategy: "sequential",
    members: [
      {
        recipient_uuid: input.recipient_uuid,
        name: "Bench",
        channels: CHANNELS,
        contacts: {email: "bench@example.com"},
        ack_timeout_seconds: 120,
        repeat: 1,
        quiet_hours: null
      }
    ]
  };
  const stepsTotal = CHANNELS.length * 2;
  insertNotification.run(
    id,
    input.recipient_uuid,
    message,
    input.priority,
    source,
    JSON.stringify(CHANNELS),
    chainId,
    now,
    now,
    API_KEY_ID
  );
  insertEscalation.run(chainId, id, JSON.stringify(policy), stepsTotal, now);
  insertAudit.run(
    now,
    API_KEY_ID,
    id,
    source,
    JSON.stringify({target: input.recipient_uuid, priority: input.priority, dedup_key: null})
  );
  const self = `/api/v1/notifications/${id}`;
  const view = {
    id,
    status: "queued",
    recipient_uuid: input.recipient_uuid,
    message,
    priority: input.priority,
    channels_planned: CHANNELS,
    escalation_chain_id: chainId,
    created_at: now,
    links: {self, ack: `${self}/ack`},
    source,
    dedup_key: null,
    link: null,
    service: null,
    environment: null,
    occurrences: 1,
    updated_at: now,
    acknowledged_at: null,
    acknowledged_by: null,
    acknowledged_via: null,
    acknowledged_note: null,
    resolved_at: null,
    escalation: {step: 0, steps_total: stepsTotal, next_step_at: now},
    attempts: []
  };
  insertEvent.run(
    eventId,
    id,
    now,
    JSON.stringify({id: eventId, type: "escalation.started", created_at: now, data: {notification: view}})
  );
  return {status: "queued", notification_uuid: id, channels_planned: CHANNELS, escalation_chain_id: chainId};
}

// Group commit, as in src/store/journal/journal.ts: queue, then one transaction per turn.
let queue = [];
let flushScheduled = false;
const commitBatch = db.transaction((batch, nowMs) => batch.map((item) => writeAlert(item.input, nowMs)));

function flush() {
  flushScheduled = false;
  const batch = queue.length > MAX_BATCH ? queue.splice(0, MAX_BATCH) : queue;
  if (batch === queue) queue = [];
  if (queue.length > 0) schedule();
  if (batch.length === 0) return;
  let results;
  try {
    results = commitBatch.immediate(batch, Date.now());
  } catch (error) {
    for (const item of batch) item.done(error);
    return;
  }
  afterCommit(() => batch.forEach((item, index) => item.done(null, results[index])));
}

// The WAL flush of src/store/journal/wal-sync.ts: one fsync at a time on the thread pool; the
// commits made while it runs wait for the next one.
let walFd = null;
let flushing = false;
let unflushed = [];
function afterCommit(answer) {
  unflushed.push(answer);
  if (!flushing) flushWal();
}
function flushWal() {
  const covered = unflushed;
  unflushed = [];
  flushing = true;
  walFd ??= openSync(`${dbPath}-wal`, "r");
  fsync(walFd, (error) => {
    if (error) throw error;
    flushing = false;
    for (const answer of covered) answer();
    if (unflushed.length > 0) flushWal();
  });
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
    while (queue.length > 0 || flushScheduled) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => {
      checkpointer.once("message", resolve);
      checkpointer.once("exit", resolve);
      checkpointer.postMessage("stop");
    });
    await checkpointer.terminate();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    process.exit(0);
  });
  server.closeIdleConnections();
});
