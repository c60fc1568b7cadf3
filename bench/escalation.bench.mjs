// `npm run bench:escalation`: how quickly and how faithfully the escalation runner works, on the
// built gateway (dist/). Not a test: it prints figures and PASS/MISS verdicts against the targets
// of the escalation issue and exits 0 unless something crashes. Everything runs on 127.0.0.1.
//
// 1. Latency: alerts sent at a steady rate; for each, the time from sending the POST to the
//    moment its first attempt starts in the driver (so ingest is included: an upper bound).
// 2. Restart: 10,000 running escalations, the gateway stopped, every chain's next step set due
//    after the restart (spread over BENCH_RESTART_SPREAD_SECONDS, 0 = all at one instant); time
//    from spawning the new process to /healthz answering, then the lateness of each due step
//    (attempt started_at minus its due time).
// 3. Storm: 10,000 alerts to one person within a minute on a one-line voice channel whose calls
//    take a few seconds; how many calls each escalation step cost.
// 4. Auditor: the paging auditor's pass (docs/reliability.md) over BENCH_RUNNING open alerts, all
//    paged (the normal case), then none paged but each waiting for a channel (every alert a
//    suspect the question must look at closely). The auditor also runs in parts 1-3, as in production.
//
// Env: BENCH_RATE (alerts/s, default 100), BENCH_SECONDS (default 10), BENCH_RUNNING (default
// 10000), BENCH_STORM_ALERTS (default 10000), BENCH_STORM_SECONDS (default 60),
// BENCH_CALL_MS (default 3000), BENCH_RESTART_SPREAD_SECONDS (default 20), BENCH_ONLY
// (latency|restart|storm|auditor).

import {spawn} from "node:child_process";
import {mkdtempSync, readFileSync, rmSync} from "node:fs";
import {cpus, tmpdir} from "node:os";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import {performance} from "node:perf_hooks";
import {setTimeout as sleep} from "node:timers/promises";
import Database from "better-sqlite3";
import {startGateway} from "../dist/boot/gateway.js";
import {createLogger} from "../dist/lib/logger.js";
import {CHANNELS} from "../dist/domain/vocabulary.js";
import {InstantDriver, benchSettings} from "./escalation-gateway.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const RATE = env("BENCH_RATE", 100);
const SECONDS = env("BENCH_SECONDS", 10);
const RUNNING = env("BENCH_RUNNING", 10_000);
const STORM_ALERTS = env("BENCH_STORM_ALERTS", 10_000);
const STORM_SECONDS = env("BENCH_STORM_SECONDS", 60);
const CALL_MS = env("BENCH_CALL_MS", 3000);
const RESTART_SPREAD = env("BENCH_RESTART_SPREAD_SECONDS", 20);
const ONLY = process.env.BENCH_ONLY ?? "";
const TARGETS = {p50Ms: 20, p99Ms: 100, servingMs: 2000, latenessMs: 1000, auditPassMs: 50};

const tempDirs = [];
const freshDir = (label) => {
  const dir = mkdtempSync(join(tmpdir(), `klaxon-bench-${label}-`));
  tempDirs.push(dir);
  return dir;
};

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const verdict = (ok) => (ok ? "PASS" : "MISS");
const ms = (value) => `${value.toFixed(1)} ms`;

/** A small client for one gateway, with its initial admin key. */
function client(url, dataDir) {
  const key = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();
  return async (method, path, body) => {
    const response = await fetch(url + path, {
      method,
      headers: {"X-API-Key": key, "Content-Type": "application/json"},
      body: body === undefined ? undefined : JSON.stringify(body)
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

async function recipients(call, count, fields) {
  const uuids = [];
  for (let i = 0; i < count; i++)
    uuids.push((await call("POST", "/api/v1/recipients", {name: `Bench ${i}`, ...fields(i)})).uuid);
  return uuids;
}

/** Sends `total` alerts at `rate` per second, `concurrency` at most in flight; calls `sent(id, startedAt)` for each. */
async function paced(total, rate, send) {
  const started = performance.now();
  const inFlight = new Set();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const job = send(i).finally(() => inFlight.delete(job));
    inFlight.add(job);
    if (inFlight.size >= 256) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
}

async function latency() {
  const dataDir = freshDir("latency");
  const firstAttempt = new Map();
  const drivers = CHANNELS.map(
    (channel) =>
      new InstantDriver(channel, (delivery) => {
        const now = performance.now();
        for (const alert of delivery.alerts)
          if (!firstAttempt.has(alert.notification_id)) firstAttempt.set(alert.notification_id, now);
      })
  );
  const gateway = await startGateway(benchSettings(dataDir), {logger: createLogger("warn"), drivers});
  const call = client(gateway.url, dataDir);
  // One person per alert: alerts to someone already being paged wait for that page (storm grouping), which is not what this measures.
  const people = await recipients(call, RATE * SECONDS, (i) => ({
    email: `bench${i}@factory.lan`,
    channel_order: ["email"],
    escalation: {ack_timeout_seconds: 3600, repeat: 0}
  }));
  const sentAt = new Map();
  await paced(RATE * SECONDS, RATE, async (i) => {
    const at = performance.now();
    const answer = await call("POST", "/api/v1/notifications/send", {
      recipient_uuid: people[i % people.length],
      message: `Bench alert ${i}: oil temperature high on press 7`,
      priority: "high",
      source: "bench"
    });
    sentAt.set(answer.notification_uuid, at);
  });
  await gateway.services.runner.idle();
  const delays = [...sentAt]
    .map(([id, at]) => firstAttempt.get(id) - at)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  await gateway.stop();
  const p50 = percentile(delays, 50);
  const p99 = percentile(delays, 99);
  console.log(
    `\n# 1. Accepted POST to first attempt started, ${RATE} alerts/s for ${SECONDS} s (${delays.length} of ${sentAt.size} alerts attempted)`
  );
  console.log(`p50 ${ms(p50)} (target <= ${TARGETS.p50Ms} ms) ${verdict(p50 <= TARGETS.p50Ms)}`);
  console.log(`p99 ${ms(p99)} (target <= ${TARGETS.p99Ms} ms) ${verdict(p99 <= TARGETS.p99Ms)}`);
  console.log(`max ${ms(delays.at(-1))}`);
}

function spawnGateway(dataDir, port) {
  const child = spawn(process.execPath, [join(ROOT, "bench", "escalation-gateway.mjs"), dataDir, String(port)], {
    stdio: ["ignore", "pipe", "inherit"]
  });
  const serving = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      const match = /serving (\S+)/.exec(String(chunk));
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code} before serving`)));
  });
  return {child, serving};
}

async function stopChild(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function restart() {
  const dataDir = freshDir("restart");
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  let {child, serving} = spawnGateway(dataDir, port);
  const url = await serving;
  const call = client(url, dataDir);
  const people = await recipients(call, 100, (i) => ({
    email: `bench${i}@factory.lan`,
    channel_order: ["email"],
    escalation: {ack_timeout_seconds: 3600, repeat: 1}
  }));
  await paced(RUNNING, 2000, (i) =>
    call("POST", "/api/v1/notifications/send", {
      recipient_uuid: people[i % people.length],
      message: `Running escalation ${i}`,
      priority: "high"
    })
  );
  await sleep(1000);
  await stopChild(child);

  // The downtime "lasted an hour": every chain's next step falls due after the restart, spread
  // evenly over RESTART_SPREAD seconds from 4 s after the spawn (0: all at the same instant).
  const journalPath = join(dataDir, "journal.sqlite");
  const firstDue = Date.now() + 4000;
  const db = new Database(journalPath);
  const chains = db.prepare("SELECT notification_id FROM escalations WHERE state = 'running'").all();
  const setDue = db.prepare("UPDATE escalations SET next_step_at = ? WHERE notification_id = ?");
  const dueOf = new Map();
  db.transaction(() =>
    chains.forEach(({notification_id: id}, i) => {
      const due = new Date(firstDue + Math.floor((i / chains.length) * RESTART_SPREAD * 1000)).toISOString();
      dueOf.set(id, due);
      setDue.run(due, id);
    })
  )();
  const running = chains.length;
  db.close();

  const since = {since: new Date().toISOString()};
  const t0 = performance.now();
  ({child, serving} = spawnGateway(dataDir, port));
  await serving;
  for (;;) {
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false
    );
    if (ok) break;
    await sleep(5);
  }
  const servingMs = performance.now() - t0;

  // Each chain's first attempt after the restart, whatever its step: an anchor carries its second
  // step; a newcomer still waiting, at the stop, for the shared page of its storm (issue 30: at most
  // storm.max_join_delay_seconds after acceptance) carries its first.
  const reader = new Database(journalPath, {readonly: true});
  const count = reader.prepare("SELECT COUNT(DISTINCT notification_id) AS n FROM attempts WHERE started_at >= @since");
  const deadline = Date.now() + 60_000;
  while (count.get(since).n < running && Date.now() < deadline) await sleep(100);
  const lateness = reader
    .prepare(
      "SELECT notification_id, MIN(started_at) AS started_at FROM attempts WHERE started_at >= @since GROUP BY notification_id"
    )
    .all(since)
    .map((row) => Date.parse(row.started_at) - Date.parse(dueOf.get(row.notification_id)))
    .sort((a, b) => a - b);
  reader.close();
  await stopChild(child);

  console.log(`\n# 2. Restart with ${running} running escalations`);
  console.log(
    `time to serving (spawn to /healthz 200) ${ms(servingMs)} (target <= ${TARGETS.servingMs} ms) ${verdict(servingMs <= TARGETS.servingMs)}`
  );
  console.log(
    `due steps fired: ${lateness.length} of ${running}, ${RESTART_SPREAD ? `due times spread over ${RESTART_SPREAD} s` : "all due at the same instant"}`
  );
  const p99 = percentile(lateness, 99);
  console.log(
    `lateness p50 ${ms(percentile(lateness, 50))}, p99 ${ms(p99)}, max ${ms(lateness.at(-1) ?? NaN)} (target <= ${TARGETS.latenessMs} ms) ${verdict(lateness.length === running && lateness.at(-1) <= TARGETS.latenessMs)}`
  );
}

/** A one-line voice channel whose calls take CALL_MS and are never acknowledged. */
class SlowCallDriver extends InstantDriver {
  concurrency = 1;
  calls = [];
  async deliver(delivery) {
    this.calls.push({at: performance.now(), alerts: delivery.alerts.length});
    await sleep(CALL_MS);
    return {outcome: "no_answer", detail: "benchmark: nobody answered"};
  }
}

async function storm() {
  const dataDir = freshDir("storm");
  const voice = new SlowCallDriver("voice_call");
  const gateway = await startGateway(benchSettings(dataDir), {logger: createLogger("warn"), drivers: [voice]});
  const call = client(gateway.url, dataDir);
  const ackTimeout = 30;
  const [maria] = await recipients(call, 1, () => ({
    phone: "+4915112345678",
    channel_order: ["voice_call"],
    escalation: {ack_timeout_seconds: ackTimeout, repeat: 1}
  }));
  await paced(STORM_ALERTS, STORM_ALERTS / STORM_SECONDS, (i) =>
    call("POST", "/api/v1/notifications/send", {
      recipient_uuid: maria,
      message: `Storm alert ${i}`,
      priority: "critical"
    })
  );
  const exhausted = gateway.journal.db.prepare("SELECT COUNT(*) AS n FROM escalations WHERE state = 'exhausted'");
  const deadline = Date.now() + (STORM_SECONDS + 4 * ackTimeout) * 1000;
  while (exhausted.get().n < STORM_ALERTS && Date.now() < deadline) await sleep(500);
  await gateway.services.runner.idle();
  const attempts = gateway.journal.db
    .prepare("SELECT COUNT(*) AS n FROM attempts WHERE channel = 'voice_call'")
    .get().n;
  const unpaged = gateway.journal.db
    .prepare(
      "SELECT COUNT(*) AS n FROM notifications n WHERE NOT EXISTS (SELECT 1 FROM attempts a WHERE a.notification_id = n.id)"
    )
    .get().n;
  const chains = exhausted.get().n;
  await gateway.stop();
  // Each escalation step of the storm is one ack-timeout window, counted from the first call.
  const first = voice.calls[0]?.at ?? 0;
  const perWindow = new Map();
  for (const {at} of voice.calls) {
    const window = Math.floor((at - first) / (ackTimeout * 1000));
    perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  console.log(
    `\n# 3. Storm: ${STORM_ALERTS} alerts to one person in ${STORM_SECONDS} s, calls of ${CALL_MS} ms, ack timeout ${ackTimeout} s, 2 steps each`
  );
  console.log(
    `${chains} of ${STORM_ALERTS} chains ran to the end; ${attempts} voice attempts recorded, carried by ${voice.calls.length} calls`
  );
  console.log(`alerts per call: ${voice.calls.map((c) => c.alerts).join(", ")}`);
  console.log(`alerts never named in any call: ${unpaged} (target 0) ${verdict(unpaged === 0)}`);
  for (const [window, calls] of [...perWindow].sort((a, b) => a[0] - b[0]))
    console.log(
      `step window ${window} (${window * ackTimeout}-${(window + 1) * ackTimeout} s after the first call): ${calls} call(s) (target <= 1) ${verdict(calls <= 1)}`
    );
}

/** The durations of `passes` calls of `pass`, in order. */
async function timed(passes, pass) {
  const durations = [];
  for (let i = 0; i < passes; i++) {
    const t0 = performance.now();
    await pass();
    durations.push(performance.now() - t0);
  }
  return durations;
}

/**
 * Writes `count` open alerts straight into the journal, each with its first step carried an hour
 * ago and its next one an hour ahead: the state of a box with that many alerts nobody has acknowledged.
 */
function plantOpenAlerts(db, count) {
  const at = new Date(Date.now() - 3600_000).toISOString();
  const later = new Date(Date.now() + 3600_000).toISOString();
  const alert = db.prepare(
    `INSERT INTO notifications (id, status, target_uuid, target_kind, message, priority, channels_planned, escalation_chain_id, created_at, updated_at)
     VALUES (?, 'notifying', ?, 'recipient', ?, 'high', '["email"]', ?, ?, ?)`
  );
  const chain = db.prepare(
    `INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state, progress)
     VALUES (?, ?, ?, 1, 2, ?, 1, 'running', '{"carried": [0], "current": 0, "noted": {}}')`
  );
  const attempt = db.prepare(
    `INSERT INTO attempts (id, notification_id, channel, recipient_uuid, target, step, started_at, finished_at, outcome)
     VALUES (?, ?, 'email', ?, 'b***@factory.lan', 0, ?, ?, 'sent')`
  );
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `notif_bench${String(i).padStart(8, "0")}`;
      const person = `person-${i % 100}`;
      alert.run(id, person, `Open alert ${i}`, `esc_bench${i}`, at, at);
      const policy = {
        target: {uuid: person, kind: "recipient", name: person},
        priority: "high",
        strategy: "sequential",
        members: []
      };
      chain.run(`esc_bench${i}`, id, JSON.stringify(policy), later);
      attempt.run(`att_bench${i}`, id, person, at, at);
    }
  })();
}

async function auditor() {
  const dataDir = freshDir("auditor");
  // `smtpDown`: the email channel says it cannot be used, so the chains waiting for it stay waiting.
  const start = (smtpDown) =>
    startGateway(benchSettings(dataDir), {
      logger: createLogger("warn"),
      drivers: CHANNELS.map((channel) => {
        const driver = new InstantDriver(channel);
        if (smtpDown && channel === "email") driver.unavailableReason = () => "bench: SMTP down";
        return driver;
      })
    });
  let gateway = await start(false);
  plantOpenAlerts(gateway.journal.db, RUNNING);
  // The first pass examines every open alert; later ones only alerts not yet seen paged.
  const report = (label, durations) => {
    const later = durations.slice(1).sort((a, b) => a - b);
    const max = later.at(-1);
    console.log(
      `${label}: first pass ${ms(durations[0])}; later passes p50 ${ms(percentile(later, 50))}, max ${ms(max)} (target <= ${TARGETS.auditPassMs} ms) ${verdict(max <= TARGETS.auditPassMs)}`
    );
  };
  console.log(`\n# 4. Paging auditor over ${RUNNING} open alerts`);
  report("every alert paged", await timed(21, () => gateway.operations.auditor.tick()));
  await gateway.stop();
  // The same alerts as if no page had gone out because their channel is down: each one is a
  // suspect whose recorded wait the question must find, on every pass (its worst shape short of
  // a finding). A new start, whose auditor has seen none of them paged.
  const db = new Database(join(dataDir, "journal.sqlite"));
  db.prepare("UPDATE attempts SET outcome = 'skipped'").run();
  db.prepare(`UPDATE escalations SET waiting_for = '[{"channel":"email","reason":"bench: SMTP down"}]'`).run();
  db.close();
  gateway = await start(true);
  report("no alert paged, each waiting for a channel", await timed(21, () => gateway.operations.auditor.tick()));
  const findings = gateway.journal.db.prepare("SELECT COUNT(*) AS n FROM paging_audit").get().n;
  console.log(
    `findings: ${findings} (target 0: every alert has a page or a recorded reason) ${verdict(findings === 0)}`
  );
  await gateway.stop();
}

console.log(
  `bench:escalation on ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${new Date().toISOString()}`
);
try {
  if (!ONLY || ONLY === "latency") await latency();
  if (!ONLY || ONLY === "restart") await restart();
  if (!ONLY || ONLY === "storm") await storm();
  if (!ONLY || ONLY === "auditor") await auditor();
} finally {
  for (const dir of tempDirs) rmSync(dir, {recursive: true, force: true});
}
