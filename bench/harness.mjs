// Shared parts of the load benchmarks (bench/ingest.bench.mjs, bench/compare.bench.mjs): the
// servers under test as child processes on 127.0.0.1 with fresh data directories, Klaxon's
// preparation (key, recipient, alert body), the journal check and the report helpers (the load
// driver is bench/load-driver.mjs). Every child process is killed and every data directory
// removed when the bench exits.
//
// Env read here: BENCH_SECONDS (measured seconds per target, default 10), BENCH_WARMUP_SECONDS
// (default 2), BENCH_CONNECTIONS (default 50), BENCH_KEEP_DATA=1 (keep the data directories and
// print where they are), BENCH_GATEWAY (a built main.js to measure instead of dist/main.js, e.g.
// a build of another commit, for before/after figures), BENCH_CPU_PROF (a directory: the gateway
// runs with `node --cpu-prof` and writes one .cpuprofile there per start; read it with
// `node bench/cpu-profile-summary.mjs <file>`), BENCH_CHANNEL (`email`, the default: the bench
// recipient's email goes to a loopback SMTP sink, as on a gateway set up to page someone; `none`:
// no channel is configured, so every alert runs its whole chain at once, each step skipped).

import {spawn} from "node:child_process";
import {existsSync, mkdtempSync, readFileSync, rmSync} from "node:fs";
import {cpus, freemem, loadavg, tmpdir, totalmem} from "node:os";
import {join, dirname, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import {createServer} from "node:net";
import http from "node:http";
import {performance} from "node:perf_hooks";
import Database from "better-sqlite3";
import {SMTPServer} from "smtp-server";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const GATEWAY_ENTRY = process.env.BENCH_GATEWAY
  ? resolve(process.env.BENCH_GATEWAY)
  : join(ROOT, "dist", "main.js");
const BASELINE_ENTRY = join(ROOT, "bench", "baseline-server.mjs");
const UNIT = readFileSync(join(ROOT, "systemd", "klaxon.service"), "utf8");
// The node flags the installed gateway runs with: those between node and main.js on the systemd unit's ExecStart line.
const GATEWAY_NODE_FLAGS = UNIT.match(/^ExecStart=\S+((?: --\S+)*) \S+main\.js$/m)[1]
  .split(" ")
  .filter(Boolean);
// The unit's environment apart from Klaxon's own settings (which each bench sets): NODE_ENV=production
// changes what the framework does at start-up (it builds the OpenAPI document then), so it counts.
const GATEWAY_RUNTIME_ENV = Object.fromEntries(
  [...UNIT.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)]
    .filter(([, name]) => !name.startsWith("KLAXON_"))
    .map(([, name, value]) => [name, value])
);
const START_TIMEOUT_MS = 20_000;
export const BODY_BYTES = 280;

export function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

export const LOAD = {
  seconds: envNumber("BENCH_SECONDS", 10),
  warmupSeconds: envNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(envNumber("BENCH_CONNECTIONS", 50))
};
const KEEP_DATA = process.env.BENCH_KEEP_DATA === "1";
export const CHANNEL = process.env.BENCH_CHANNEL ?? "email";
if (!["email", "none"].includes(CHANNEL))
  throw new Error(`BENCH_CHANNEL must be email or none, got ${JSON.stringify(CHANNEL)}`);
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : null;

// ---------------------------------------------------------------- child processes

const children = new Set();
const dataDirs = [];

function freshDataDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `klaxon-bench-${label}-`));
  dataDirs.push(dir);
  return dir;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Spawns a command; keeps the last 16 KiB of its output for error reports. */
function startChild(label, command, args, env) {
  const child = spawn(command, args, {cwd: ROOT, env: {...process.env, ...env}, stdio: ["ignore", "pipe", "pipe"]});
  const record = {label, child, output: "", exited: null};
  const keep = (chunk) => {
    record.output = (record.output + chunk.toString()).slice(-16_384);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  record.exit = new Promise((resolveExit) => {
    child.on("exit", (code, signal) => {
      record.exited = {code, signal};
      children.delete(record);
      resolveExit(record.exited);
    });
  });
  children.add(record);
  return record;
}

export async function stopChild(record, timeoutMs = 15_000) {
  if (record.exited) return record.exited;
  record.child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (!record.exited) {
      console.error(`  ${record.label}: no exit ${timeoutMs} ms after SIGTERM; sending SIGKILL`);
      record.child.kill("SIGKILL");
    }
  }, timeoutMs);
  const exited = await record.exit;
  clearTimeout(timer);
  return exited;
}

/** Stops a child that must shut down cleanly; a non-zero exit is a failed run. */
export async function stopCleanly(record) {
  const exited = await stopChild(record);
  if (exited.code !== 0)
    throw new Error(`${record.label} exited with ${JSON.stringify(exited)} on SIGTERM:\n${record.output}`);
}

function killAllChildren() {
  for (const record of children) {
    try {
      record.child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}

process.on("exit", killAllChildren);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    killAllChildren();
    process.exit(130);
  });
}

/** Runs a bench's main(): reports a crash with exit code 1, and always cleans up. */
export async function runBench(name, main) {
  try {
    await main();
  } catch (error) {
    console.error(`\n${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    process.exitCode = 1;
  } finally {
    killAllChildren();
    if (KEEP_DATA) console.log(`\ndata directories kept: ${dataDirs.join(" ")}`);
    else for (const dir of dataDirs) rmSync(dir, {recursive: true, force: true});
  }
}

// ---------------------------------------------------------------- HTTP helpers (loopback only)

export function request(port, method, path, {headers = {}, body} = {}) {
  return new Promise((resolveResponse, reject) => {
    const payload =
      body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: false,
        headers: {
          ...headers,
          ...(payload ? {"content-type": "application/json", "content-length": payload.length} : {})
        }
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () =>
          resolveResponse({status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8")})
        );
      }
    );
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** Polls `path` until it answers 200; returns ms since `startedAt`. */
async function waitReady(record, port, path, startedAt) {
  const deadline = startedAt + START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (record.exited)
      throw new Error(`${record.label} exited during start (${JSON.stringify(record.exited)}):\n${record.output}`);
    try {
      const res = await request(port, "GET", path);
      if (res.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    await new Promise((resolveTimer) => setTimeout(resolveTimer, 5));
  }
  throw new Error(`${record.label} did not answer 200 on ${path} within ${START_TIMEOUT_MS} ms:\n${record.output}`);
}

export {cpuSeconds, readProcStatus} from "./proc-stat.mjs";

// ---------------------------------------------------------------- the loopback SMTP sink

/** Mail the sink took, over the whole bench (with storm grouping: one per step of the bench's storm). */
export const mailSink = {received: 0, server: null, port: 0};

/** Starts the sink once; the environment that points a Klaxon at it (none with BENCH_CHANNEL=none). */
async function mailEnvironment() {
  if (CHANNEL === "none") return {};
  if (!mailSink.server) {
    mailSink.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, _session, done) {
        stream.resume();
        stream.on("end", () => {
          mailSink.received++;
          done();
        });
      }
    });
    await new Promise((resolveListen) => mailSink.server.listen(0, "127.0.0.1", resolveListen));
    mailSink.server.server.unref();
    mailSink.port = mailSink.server.server.address().port;
  }
  return {
    KLAXON_SMTP_HOST: "127.0.0.1",
    KLAXON_SMTP_PORT: String(mailSink.port),
    KLAXON_SMTP_FROM: "klaxon-bench@example.com"
  };
}

/** One line for a bench's header: what the bench recipient's alerts do after they are accepted. */
export function describeChannel() {
  return CHANNEL === "email"
    ? "channel: the bench recipient's email goes to a loopback SMTP sink (storm grouping: the alerts share one page per step)"
    : "channel: none configured (BENCH_CHANNEL=none): each alert runs its whole chain at once, every step skipped (6 events per alert)";
}

// ---------------------------------------------------------------- subjects

/** Klaxon as a subject, run from a built main.js (`GATEWAY_ENTRY`, or another build to compare with). */
export function klaxonSubject(entry = GATEWAY_ENTRY, label = "klaxon") {
  return {
    label,
    readyPath: "/healthz",
    environment: mailEnvironment,
    command: (port, dataDir) => ({
      file: process.execPath,
      args: [
        ...GATEWAY_NODE_FLAGS,
        ...(CPU_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROFILE_DIR}`] : []),
        entry
      ],
      env: {
        ...GATEWAY_RUNTIME_ENV,
        KLAXON_HOST: "127.0.0.1",
        KLAXON_PORT: String(port),
        KLAXON_DATA_DIR: dataDir,
        KLAXON_LOG_LEVEL: "warn",
        // The per-key limiter must not throttle the load.
        KLAXON_RATE_LIMIT_PER_SECOND: "1000000",
        KLAXON_RATE_LIMIT_BURST: "1000000",
        KLAXON_CONFIG: ""
      }
    }),
    journal: (dataDir) => join(dataDir, "journal.sqlite")
  };
}

/**
 * A server under test: how to spawn it (`command(port, dataDir)` gives the executable, its
 * arguments and environment), the path that answers 200 once it serves, and where its journal is.
 */
export const SUBJECTS = {
  klaxon: klaxonSubject(),
  baseline: {
    label: "baseline",
    readyPath: "/healthz",
    command: (port, dataDir) => ({
      file: process.execPath,
      args: [BASELINE_ENTRY],
      env: {BASELINE_PORT: String(port), BASELINE_DATA_DIR: dataDir}
    }),
    journal: (dataDir) => join(dataDir, "baseline.sqlite")
  }
};

/** Starts a subject with a fresh data dir; returns the record, port, dir and ms to first 200. */
export async function startSubject(subject) {
  const dataDir = freshDataDir(subject.label);
  const port = await freePort();
  const {file, args, env} = subject.command(port, dataDir);
  const extraEnv = subject.environment ? await subject.environment() : {};
  const startedAt = performance.now();
  const record = startChild(subject.label, file, args, {...env, ...extraEnv});
  const startMs = await waitReady(record, port, subject.readyPath, startedAt);
  return {record, port, dataDir, startMs};
}

export function assertGatewayBuilt() {
  if (!existsSync(GATEWAY_ENTRY))
    throw new Error(`${GATEWAY_ENTRY} is missing: run \`npm run build\` first (the npm bench scripts do)`);
}

// ---------------------------------------------------------------- Klaxon's side of a load run

export const SEND_PATH = "/api/v1/notifications/send";

/** Pads the message of `shell(message)` so the whole body is exactly `bytes` long. */
export function padBody(shell, head, bytes = BODY_BYTES) {
  let message = head;
  while (Buffer.byteLength(shell(message)) < bytes) message += "x";
  const body = shell(message.slice(0, message.length - (Buffer.byteLength(shell(message)) - bytes)));
  if (Buffer.byteLength(body) !== bytes) throw new Error(`cannot pad the body to ${bytes} bytes: ${body}`);
  return body;
}

export const ALERT_TEXT = "bench: disk /var/lib/postgresql on db-primary-01 is 97% full, writes will fail soon; ";

/** Klaxon's send body; `tag` (fixed width) makes each alert's message unique when wanted. */
export function alertBody(recipientUuid, tag = "") {
  return padBody(
    (message) =>
      JSON.stringify({recipient_uuid: recipientUuid, message: tag + message, priority: "high", source: "bench"}),
    ALERT_TEXT
  );
}

/** Reads the admin key the gateway wrote on first start and creates the bench recipient through the API. */
export async function prepareKlaxon(port, dataDir) {
  const keyFile = join(dataDir, "initial-admin-key");
  if (!existsSync(keyFile)) throw new Error(`the gateway wrote no ${keyFile}`);
  const key = readFileSync(keyFile, "utf8").trim();
  const res = await request(port, "POST", "/api/v1/recipients", {
    headers: {"X-API-Key": key},
    body: {name: "Bench", email: "bench@example.com"}
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`creating the bench recipient answered ${res.status}: ${res.text}`);
  return {headers: {"X-API-Key": key}, recipientUuid: JSON.parse(res.text).uuid};
}

/** Sends one request so a misconfigured target fails loudly before the load run. */
export async function probe(port, path, headers, body, expected) {
  const res = await request(port, "POST", path, {headers, body});
  if (res.status !== expected) throw new Error(`probe POST ${path} answered ${res.status}: ${res.text}`);
}

/** Row counts and notification ids of a stopped server's journal, opened read-only. */
export function countRows(dbFile) {
  const db = new Database(dbFile, {readonly: true, fileMustExist: true});
  try {
    const count = (table) => db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get().n;
    const ids = new Set(db.prepare("SELECT id FROM notifications").pluck().all());
    // Each accepted send commits exactly one escalation.started event; the escalation runner adds
    // step and attempt events later, so only that type is counted against the sends.
    const started = db.prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'escalation.started'").get().n;
    return {notifications: count("notifications"), escalations: count("escalations"), events: started, ids};
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- report

function machine() {
  const cpuModel =
    (readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m) ?? [])[1] ?? cpus()[0]?.model ?? "unknown";
  return {
    cpus: cpus().length,
    cpuModel: cpuModel.trim(),
    memGb: (totalmem() / 2 ** 30).toFixed(1),
    freeGb: (freemem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    load: loadavg()[0].toFixed(2)
  };
}

export function describeMachine() {
  const box = machine();
  return `machine: ${box.cpus} CPUs (${box.cpuModel}), ${box.memGb} GB RAM (${box.freeGb} GB free), node ${box.node}, ${box.platform}, load average ${box.load}`;
}

export function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  const line = (row) => "| " + row.map((cell, column) => String(cell).padEnd(widths[column])).join(" | ") + " |";
  return [
    line(rows[0]),
    "|" + widths.map((width) => "-".repeat(width + 2)).join("|") + "|",
    ...rows.slice(1).map(line)
  ].join("\n");
}

export const fmt = {
  int: (value) => Math.round(value).toLocaleString("en-US"),
  ms: (value) => `${value.toFixed(value < 10 ? 1 : 0)} ms`,
  mb: (value) => `${value.toFixed(1)} MB`
};

export function verdict(ok) {
  return ok ? "PASS" : "MISS";
}

export function average(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
