// `npm run bench:ingest`: ingest throughput, latency, cold start and idle memory of the built
// gateway (dist/main.js), next to a bare baseline (bench/baseline-server.mjs: node:http +
// better-sqlite3 doing the same durable writes with the same group commit). Not a test: it
// prints figures and PASS/MISS verdicts against the targets, and exits 0 unless something
// crashes. Everything runs on 127.0.0.1; every child process is stopped before it exits.
//
// Env: BENCH_SECONDS (measured seconds per target, default 10), BENCH_WARMUP_SECONDS (default 2),
// BENCH_CONNECTIONS (default 50), BENCH_COLD_STARTS (default 3), BENCH_KEEP_DATA=1 (keep the
// temporary data directories and print where they are).

import {spawn} from "node:child_process";
import {existsSync, mkdtempSync, readFileSync, rmSync} from "node:fs";
import {cpus, freemem, tmpdir, totalmem} from "node:os";
import {join, dirname} from "node:path";
import {fileURLToPath} from "node:url";
import {createServer} from "node:net";
import http from "node:http";
import {performance} from "node:perf_hooks";
import autocannon from "autocannon";
import Database from "better-sqlite3";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const GATEWAY_ENTRY = join(ROOT, "dist", "main.js");
const BASELINE_ENTRY = join(ROOT, "bench", "baseline-server.mjs");

function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

const SECONDS = envNumber("BENCH_SECONDS", 10);
const WARMUP_SECONDS = envNumber("BENCH_WARMUP_SECONDS", 2);
const CONNECTIONS = Math.round(envNumber("BENCH_CONNECTIONS", 50));
const COLD_STARTS = Math.round(envNumber("BENCH_COLD_STARTS", 3));
const KEEP_DATA = process.env.BENCH_KEEP_DATA === "1";
const IDLE_MS = 2000;
const START_TIMEOUT_MS = 20_000;
const BODY_BYTES = 280;

const TARGETS = {ratio: 0.7, alertsPerSecond: 2000, p99Ms: 50, idleRssMb: 120, coldStartMs: 1500};

// ---------------------------------------------------------------- child processes

const children = new Set();
const dataDirs = [];

function freshDataDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `klaxon-bench-${label}-`));
  dataDirs.push(dir);
  return dir;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Spawns node with a script; keeps the last 16 KiB of its output for error reports. */
function startChild(label, entry, env) {
  const child = spawn(process.execPath, [entry], {cwd: ROOT, env: {...process.env, ...env}, stdio: ["ignore", "pipe", "pipe"]});
  const record = {label, child, output: "", exited: null};
  const keep = (chunk) => {
    record.output = (record.output + chunk.toString()).slice(-16_384);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  record.exit = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      record.exited = {code, signal};
      children.delete(record);
      resolve(record.exited);
    });
  });
  children.add(record);
  return record;
}

async function stopChild(record, timeoutMs = 15_000) {
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

// ---------------------------------------------------------------- HTTP helpers (loopback only)

function request(port, method, path, {headers = {}, body} = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
    const req = http.request(
      {host: "127.0.0.1", port, method, path, agent: false, headers: {...headers, ...(payload ? {"content-type": "application/json", "content-length": payload.length} : {})}},
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => resolve({status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8")}));
      }
    );
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** Polls GET /healthz until it answers 200; returns ms since `startedAt`. */
async function waitHealthy(record, port, startedAt) {
  const deadline = startedAt + START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (record.exited) throw new Error(`${record.label} exited during start (${JSON.stringify(record.exited)}):\n${record.output}`);
    try {
      const res = await request(port, "GET", "/healthz");
      if (res.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${record.label} did not answer 200 on /healthz within ${START_TIMEOUT_MS} ms:\n${record.output}`);
}

function readProcStatus(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field) => {
      const match = text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
      return match ? Number(match[1]) : null;
    };
    return {rssKb: kb("VmRSS"), hwmKb: kb("VmHWM")};
  } catch {
    return {rssKb: null, hwmKb: null};
  }
}

// ---------------------------------------------------------------- targets

function gatewayEnv(port, dataDir) {
  return {
    KLAXON_HOST: "127.0.0.1",
    KLAXON_PORT: String(port),
    KLAXON_DATA_DIR: dataDir,
    KLAXON_LOG_LEVEL: "warn",
    KLAXON_RATE_LIMIT_PER_SECOND: "1000000",
    KLAXON_RATE_LIMIT_BURST: "1000000",
    KLAXON_CONFIG: ""
  };
}

function baselineEnv(port, dataDir) {
  return {BASELINE_PORT: String(port), BASELINE_DATA_DIR: dataDir};
}

const SUBJECTS = {
  klaxon: {label: "klaxon", entry: GATEWAY_ENTRY, env: gatewayEnv, table: (dir) => join(dir, "journal.sqlite")},
  baseline: {label: "baseline", entry: BASELINE_ENTRY, env: baselineEnv, table: (dir) => join(dir, "baseline.sqlite")}
};

/** Starts a subject with a fresh data dir; returns the record, port, dir and ms to first 200. */
async function startSubject(subject) {
  const dataDir = freshDataDir(subject.label);
  const port = await freePort();
  const startedAt = performance.now();
  const record = startChild(subject.label, subject.entry, subject.env(port, dataDir));
  const startMs = await waitHealthy(record, port, startedAt);
  return {record, port, dataDir, startMs};
}

/** Cold start (spawn to first 200 on /healthz) and RSS after IDLE_MS idle, over `runs` fresh starts. */
async function measureStart(subject, runs) {
  const starts = [];
  const rss = [];
  for (let i = 0; i < runs; i++) {
    const {record, startMs} = await startSubject(subject);
    starts.push(startMs);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    rss.push(readProcStatus(record.child.pid).rssKb / 1024);
    const exited = await stopChild(record);
    if (exited.code !== 0) throw new Error(`${subject.label} exited with ${JSON.stringify(exited)} on SIGTERM:\n${record.output}`);
  }
  return {starts, rss, startAvg: average(starts), rssAvg: average(rss), rssMax: Math.max(...rss)};
}

function average(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

// ---------------------------------------------------------------- load

function alertBody(recipientUuid) {
  const shell = (message) => JSON.stringify({recipient_uuid: recipientUuid, message, priority: "high", source: "bench"});
  const head = "bench: disk /var/lib/postgresql on db-primary-01 is 97% full, writes will fail soon; ";
  let message = head;
  while (Buffer.byteLength(shell(message)) < BODY_BYTES) message += "x";
  return shell(message.slice(0, message.length - (Buffer.byteLength(shell(message)) - BODY_BYTES)));
}

/**
 * One autocannon run. Collects the notification id from the Location header of every 2xx answer
 * so the durability check can look each of them up in the database afterwards, and counts the
 * requests still unanswered when autocannon closes its connections at the end (the server
 * commits those too, but nobody hears the answer).
 */
function drive(port, seconds, headers, body, ackedIds) {
  const clients = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}/api/v1/notifications/send`,
        method: "POST",
        headers: {"content-type": "application/json", ...headers},
        body,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        setupClient: (client) => {
          const counts = {sent: 0, answered: 0};
          clients.push(counts);
          client.on("request", () => counts.sent++);
          client.on("response", () => counts.answered++);
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
        if (error) return reject(error);
        result.inFlightAtStop = clients.reduce((sum, counts) => sum + counts.sent - counts.answered, 0);
        resolve(result);
      }
    );
    instance.on("error", reject);
  });
}

/** Creates the recipient through the real API (Klaxon); the baseline needs none. */
async function prepare(subjectName, port, dataDir) {
  if (subjectName !== "klaxon") return {headers: {}};
  const keyFile = join(dataDir, "initial-admin-key");
  if (!existsSync(keyFile)) throw new Error(`the gateway wrote no ${keyFile}`);
  const key = readFileSync(keyFile, "utf8").trim();
  const res = await request(port, "POST", "/api/v1/recipients", {headers: {"X-API-Key": key}, body: {name: "Bench", email: "bench@example.com"}});
  if (res.status !== 201 && res.status !== 200) throw new Error(`creating the bench recipient answered ${res.status}: ${res.text}`);
  return {headers: {"X-API-Key": key}, body: alertBody(JSON.parse(res.text).uuid)};
}

/** Probes one send so a misconfigured target fails loudly before the load run. */
async function probe(port, headers, body) {
  const res = await request(port, "POST", "/api/v1/notifications/send", {headers, body});
  if (res.status !== 202) throw new Error(`probe send answered ${res.status}: ${res.text}`);
}

function countRows(dbFile) {
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

/** Warm-up then measured load on a fresh instance; `sameBody` reuses the other target's body byte for byte. */
async function loadRun(subjectName, sameBody) {
  const subject = SUBJECTS[subjectName];
  const {record, port, dataDir} = await startSubject(subject);
  try {
    const prepared = await prepare(subjectName, port, dataDir);
    const headers = prepared.headers;
    const body = sameBody ?? prepared.body;
    await probe(port, headers, body);
    const ackedIds = [];
    const warmup = await drive(port, WARMUP_SECONDS, headers, body, ackedIds);
    const measured = await drive(port, SECONDS, headers, body, ackedIds);
    const loadedStatus = readProcStatus(record.child.pid);
    const exited = await stopChild(record);
    if (exited.code !== 0) throw new Error(`${subjectName} exited with ${JSON.stringify(exited)} on SIGTERM:\n${record.output}`);
    const rows = countRows(subject.table(dataDir));
    const missing = ackedIds.filter((id) => !rows.ids.has(id)).length;
    // The probe send is one more 2xx the database holds.
    const answered2xx = 1 + warmup["2xx"] + measured["2xx"];
    return {
      body,
      warmup,
      measured,
      alertsPerSecond: measured["2xx"] / measured.duration,
      p50: measured.latency.p50,
      p99: measured.latency.p99,
      peakRssMb: loadedStatus.hwmKb / 1024,
      durability: {
        rows: rows.notifications,
        escalations: rows.escalations,
        events: rows.events,
        answered2xx,
        ackedIdsSeen: 1 + ackedIds.length,
        missing,
        // Requests autocannon had sent but not yet heard answered when it closed its connections
        // at the end of the warm-up and measured runs: the server still commits them.
        inFlight: warmup.inFlightAtStop + measured.inFlightAtStop,
        extra: rows.notifications - answered2xx
      },
      log: record.output
    };
  } catch (error) {
    await stopChild(record, 5000);
    throw error;
  }
}

// ---------------------------------------------------------------- report

function machine() {
  const cpuModel = (readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m) ?? [])[1] ?? cpus()[0]?.model ?? "unknown";
  return {
    cpus: cpus().length,
    cpuModel: cpuModel.trim(),
    memGb: (totalmem() / 2 ** 30).toFixed(1),
    freeGb: (freemem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`
  };
}

function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  const line = (row) => "| " + row.map((cell, column) => String(cell).padEnd(widths[column])).join(" | ") + " |";
  return [line(rows[0]), "|" + widths.map((width) => "-".repeat(width + 2)).join("|") + "|", ...rows.slice(1).map(line)].join("\n");
}

const fmt = {
  int: (value) => Math.round(value).toLocaleString("en-US"),
  ms: (value) => `${value.toFixed(value < 10 ? 1 : 0)} ms`,
  mb: (value) => `${value.toFixed(1)} MB`
};

function verdict(ok) {
  return ok ? "PASS" : "MISS";
}

async function main() {
  if (!existsSync(GATEWAY_ENTRY)) throw new Error(`${GATEWAY_ENTRY} is missing: run \`npm run build\` first (npm run bench:ingest does)`);
  const box = machine();
  console.log(`bench:ingest  ${new Date().toISOString()}`);
  console.log(`machine: ${box.cpus} CPUs (${box.cpuModel}), ${box.memGb} GB RAM (${box.freeGb} GB free), node ${box.node}, ${box.platform}`);
  console.log(`load: autocannon, ${CONNECTIONS} connections, pipelining 1, ${WARMUP_SECONDS} s warm-up then ${SECONDS} s measured per target, ${BODY_BYTES}-byte JSON body, loopback 127.0.0.1`);
  console.log("baseline: node:http + better-sqlite3, same four rows per alert, same WAL/synchronous=FULL and the same group commit");
  console.log("          (one transaction per event-loop turn via setImmediate), so the ratio measures framework/validation overhead, not fsync policy.");
  console.log("load generator and servers share this machine's cores: figures are noisy; compare the ratio within one run.\n");

  console.log(`cold start + idle RSS: ${COLD_STARTS} fresh starts of each ...`);
  const klaxonStart = await measureStart(SUBJECTS.klaxon, COLD_STARTS);
  console.log(`  klaxon   starts ${klaxonStart.starts.map((ms) => fmt.ms(ms)).join(", ")}; idle RSS ${klaxonStart.rss.map((mb) => fmt.mb(mb)).join(", ")}`);
  const baselineStart = await measureStart(SUBJECTS.baseline, COLD_STARTS);
  console.log(`  baseline starts ${baselineStart.starts.map((ms) => fmt.ms(ms)).join(", ")}; idle RSS ${baselineStart.rss.map((mb) => fmt.mb(mb)).join(", ")}`);

  console.log(`\nload: klaxon (dist/main.js) ...`);
  const klaxon = await loadRun("klaxon");
  console.log(`  ${fmt.int(klaxon.alertsPerSecond)} alerts/s, p50 ${fmt.ms(klaxon.p50)}, p99 ${fmt.ms(klaxon.p99)}`);
  console.log(`  body (${Buffer.byteLength(klaxon.body)} bytes, the same for both targets): ${klaxon.body}`);
  console.log(`load: baseline (bench/baseline-server.mjs) ...`);
  const baseline = await loadRun("baseline", klaxon.body);
  console.log(`  ${fmt.int(baseline.alertsPerSecond)} alerts/s, p50 ${fmt.ms(baseline.p50)}, p99 ${fmt.ms(baseline.p99)}`);

  const ratio = klaxon.alertsPerSecond / baseline.alertsPerSecond;
  const nonOk = (run) => `${fmt.int(run.measured.non2xx)} / ${fmt.int(run.measured.errors)} / ${fmt.int(run.measured.timeouts)}`;
  console.log("\nSummary (measured window only; only 2xx answers count as alerts)\n");
  console.log(
    table([
      ["metric", "klaxon", "baseline", "klaxon / baseline"],
      ["durable alerts/s (2xx)", fmt.int(klaxon.alertsPerSecond), fmt.int(baseline.alertsPerSecond), ratio.toFixed(2)],
      ["2xx answers", fmt.int(klaxon.measured["2xx"]), fmt.int(baseline.measured["2xx"]), ""],
      ["latency p50", fmt.ms(klaxon.p50), fmt.ms(baseline.p50), ""],
      ["latency p99", fmt.ms(klaxon.p99), fmt.ms(baseline.p99), ""],
      ["latency max", fmt.ms(klaxon.measured.latency.max), fmt.ms(baseline.measured.latency.max), ""],
      ["non-2xx / errors / timeouts", nonOk(klaxon), nonOk(baseline), ""],
      ["cold start (avg of " + COLD_STARTS + ")", fmt.ms(klaxonStart.startAvg), fmt.ms(baselineStart.startAvg), ""],
      ["idle RSS (avg / max)", `${fmt.mb(klaxonStart.rssAvg)} / ${fmt.mb(klaxonStart.rssMax)}`, `${fmt.mb(baselineStart.rssAvg)} / ${fmt.mb(baselineStart.rssMax)}`, ""],
      ["peak RSS under load", fmt.mb(klaxon.peakRssMb), fmt.mb(baseline.peakRssMb), ""]
    ])
  );
  for (const [name, run] of [["klaxon", klaxon], ["baseline", baseline]]) {
    const codes = Object.entries(run.measured.statusCodeStats).map(([code, {count}]) => `${code}: ${count}`).join(", ");
    console.log(`${name} status codes (measured): ${codes || "none"}`);
  }

  console.log("\nDurability check (after SIGTERM, database opened read-only)");
  for (const [name, run] of [["klaxon", klaxon], ["baseline", baseline]]) {
    const d = run.durability;
    // Every acknowledged alert must be in the table (durability); beyond those, only the requests
    // that were in flight when autocannon hung up may have been committed (exact accounting).
    const durable = d.missing === 0;
    const accounted = d.extra >= 0 && d.extra <= d.inFlight && d.escalations === d.rows && d.events === d.rows;
    const exact = d.extra === d.inFlight;
    console.log(
      `  ${name.padEnd(8)} notifications rows ${fmt.int(d.rows)} = 2xx answers ${fmt.int(d.answered2xx)} (probe + warm-up + measured) ` +
        `+ ${fmt.int(d.extra)} committed but unanswered (requests in flight when autocannon closed its connections: ${fmt.int(d.inFlight)}); ` +
        `${durable ? "all" : `${fmt.int(d.missing)} of the`} ${fmt.int(d.ackedIdsSeen)} acknowledged ids ${durable ? "found" : "MISSING"}; ` +
        `escalations ${fmt.int(d.escalations)}, escalation.started events ${fmt.int(d.events)} -> ${durable && accounted ? (exact ? "OK (exact)" : "OK") : "FAILED"}`
    );
  }

  const checks = [
    [`ratio klaxon/baseline >= ${TARGETS.ratio}`, ratio.toFixed(2), ratio >= TARGETS.ratio],
    [`durable alerts/s >= ${fmt.int(TARGETS.alertsPerSecond)}`, fmt.int(klaxon.alertsPerSecond), klaxon.alertsPerSecond >= TARGETS.alertsPerSecond],
    [`p99 <= ${TARGETS.p99Ms} ms`, fmt.ms(klaxon.p99), klaxon.p99 <= TARGETS.p99Ms],
    [`idle RSS <= ${TARGETS.idleRssMb} MB (max of ${COLD_STARTS})`, fmt.mb(klaxonStart.rssMax), klaxonStart.rssMax <= TARGETS.idleRssMb],
    [`cold start <= ${TARGETS.coldStartMs} ms (avg of ${COLD_STARTS})`, fmt.ms(klaxonStart.startAvg), klaxonStart.startAvg <= TARGETS.coldStartMs]
  ];
  console.log("\nTargets (klaxon)\n");
  console.log(table([["target", "measured", "verdict"], ...checks.map(([name, value, ok]) => [name, value, verdict(ok)])]));

  for (const [name, run] of [["klaxon", klaxon], ["baseline", baseline]]) {
    const lines = run.log.split("\n").filter((line) => line.trim() !== "" && !/^listening \d+$/.test(line));
    if (lines.length > 0) console.log(`\n${name} server output (warn and above; last ${Math.min(lines.length, 5)} of ${lines.length} lines):\n${lines.slice(-5).join("\n")}`);
  }
}

try {
  await main();
} catch (error) {
  console.error(`\nbench:ingest failed: ${error instanceof Error ? error.stack ?? error.message : error}`);
  process.exitCode = 1;
} finally {
  killAllChildren();
  if (KEEP_DATA) console.log(`\ndata directories kept: ${dataDirs.join(" ")}`);
  else for (const dir of dataDirs) rmSync(dir, {recursive: true, force: true});
}
