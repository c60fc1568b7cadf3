// `npm run bench:compare`: Klaxon's send endpoint side by side with the bare baseline
// (bench/baseline-server.mjs) and Prometheus Alertmanager (Debian package, 0.25), in one run, with
// the same client (autocannon), the same connections, the same body size and the same bounded
// duration, all on 127.0.0.1. Prints alerts/s and p99 for each and the ratios; the target (issue 31,
// which retired the earlier 0.6x-Alertmanager's-rate target) is Klaxon's CPU per durable alert <= 3x
// the baseline's with p99 <= 50 ms. Not a test: it exits 0 unless something crashes.
//
// The load comes from separate generator processes (bench/load-driver.mjs), and each target's
// row shows the server's and the generators' CPU per alert, the machine's busy cores, and
// "generator-bound" when a generator used nearly a whole core: a rate measured so is the
// client's ceiling, not the server's, and its ratio says nothing.
//
// Every request carries a different alert (a fixed-width serial in the message, or in a label for
// Alertmanager), so Alertmanager stores a new alert per POST instead of refreshing one, and every
// body has the same length. Klaxon and the baseline answer 2xx after an fsynced commit;
// Alertmanager keeps alerts in memory only.
//
// Env: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS, BENCH_KEEP_DATA, BENCH_GATEWAY
// (see bench/harness.mjs); BENCH_GENERATORS (bench/load-driver.mjs); BENCH_ROUNDS (default 1: how
// many times the three targets are measured in turn; each round prints its own ratios);
// BENCH_ALERTMANAGER (default /usr/bin/prometheus-alertmanager); BENCH_OTHER_GATEWAY (another built
// main.js, measured as klaxon-other after klaxon in every round: a before/after within one round).

import {existsSync, writeFileSync} from "node:fs";
import {cpus} from "node:os";
import {join, relative, resolve} from "node:path";
import {
  LOAD,
  BODY_BYTES,
  SEND_PATH,
  SUBJECTS,
  ALERT_TEXT,
  GATEWAY_ENTRY,
  klaxonSubject,
  alertBody,
  assertGatewayBuilt,
  countRows,
  describeChannel,
  describeMachine,
  mailSink,
  envNumber,
  fmt,
  padBody,
  prepareKlaxon,
  probe,
  readProcStatus,
  request,
  runBench,
  startSubject,
  stopChild,
  stopCleanly,
  table,
  verdict
} from "./harness.mjs";
import {GENERATORS, SERIAL_MARK, drive, withSerial} from "./load-driver.mjs";

const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 1));
const ALERTMANAGER = process.env.BENCH_ALERTMANAGER || "/usr/bin/prometheus-alertmanager";
// Another build of the gateway, measured in each round right after the first: before/after in one round.
const OTHER_GATEWAY = process.env.BENCH_OTHER_GATEWAY ? resolve(process.env.BENCH_OTHER_GATEWAY) : null;
const ALERTMANAGER_PATH = "/api/v2/alerts";
// CPU per alert against the baseline's, not a rate: the rate on two shared cores is the machine's.
const TARGET_CPU_RATIO = 3;
const TARGET_P99_MS = 50;

// One receiver that sends nothing: the figure is Alertmanager's ingest, as Klaxon's is.
const ALERTMANAGER_CONFIG = `route:
  receiver: blackhole
receivers:
  - name: blackhole
`;

const alertmanager = {
  label: "alertmanager",
  readyPath: "/-/ready",
  command: (port, dataDir) => {
    const config = join(dataDir, "alertmanager.yml");
    writeFileSync(config, ALERTMANAGER_CONFIG);
    return {
      file: ALERTMANAGER,
      args: [
        `--config.file=${config}`,
        `--storage.path=${dataDir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        // An empty address turns gossip (the HA cluster) off: nothing listens beyond the API.
        "--cluster.listen-address=",
        "--log.level=warn"
      ],
      env: {}
    };
  }
};

// Where each request's fixed-width serial goes, so every body differs and all have the same length.
const serialTag = `#${SERIAL_MARK} `;

/** One alert per POST to /api/v2/alerts, padded to the same size as Klaxon's body. */
function alertmanagerBody() {
  return padBody(
    (message) =>
      JSON.stringify([
        {
          labels: {
            alertname: "DiskFull",
            instance: "db-primary-01",
            serial: serialTag.trim(),
            priority: "high",
            source: "bench"
          },
          annotations: {summary: message}
        }
      ]),
    ALERT_TEXT
  );
}

/** How many alerts Alertmanager says it received (its own counter, read from /metrics). */
async function alertsReceived(port) {
  const res = await request(port, "GET", "/metrics");
  return res.text
    .split("\n")
    .filter((line) => line.startsWith("alertmanager_alerts_received_total{"))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

/** Start, prepare, probe, warm up, measure, stop; then check what the target kept. */
async function measure(name, recipientUuidRef) {
  const subject =
    {alertmanager, "klaxon-other": OTHER_GATEWAY && klaxonSubject(OTHER_GATEWAY, "klaxon-other")}[name] ??
    SUBJECTS[name];
  const isKlaxon = name === "klaxon" || name === "klaxon-other";
  const {record, port, dataDir} = await startSubject(subject);
  try {
    let headers = {};
    let path = SEND_PATH;
    let body;
    if (isKlaxon) {
      const prepared = await prepareKlaxon(port, dataDir);
      headers = prepared.headers;
      recipientUuidRef.uuid = prepared.recipientUuid;
    }
    if (name === "alertmanager") {
      path = ALERTMANAGER_PATH;
      body = alertmanagerBody();
    } else {
      // The baseline accepts Klaxon's recipient UUID, so both get byte-identical bodies.
      body = alertBody(recipientUuidRef.uuid, serialTag);
    }
    await probe(port, path, headers, withSerial(body, 0), name === "alertmanager" ? 200 : 202);
    const ackedIds = [];
    const load = {port, path, connections: LOAD.connections, headers, body, ackedIds};
    await drive({...load, seconds: LOAD.warmupSeconds});
    const measured = await drive({...load, seconds: LOAD.seconds, serverPid: record.child.pid});
    const perAlertMs = (cpuSeconds) => (cpuSeconds * 1000) / measured["2xx"];
    const cpuMsPerAlert = perAlertMs(measured.cpu.server);
    const generatorCpuMsPerAlert = perAlertMs(measured.cpu.generators);
    const peakRssMb = readProcStatus(record.child.pid).hwmKb / 1024;
    const kept =
      name === "alertmanager"
        ? `${fmt.int(await alertsReceived(port))} alerts received (its counter), in memory`
        : null;
    await stopCleanly(record);
    return {
      name,
      measured,
      cpuMsPerAlert,
      generatorCpuMsPerAlert,
      peakRssMb,
      bodyBytes: Buffer.byteLength(withSerial(body, 0)),
      kept: kept ?? journalCheck(subject, dataDir, ackedIds)
    };
  } catch (error) {
    await stopChild(record, 5000);
    throw error;
  }
}

/** Every acknowledged id must be in the journal of the stopped server. */
function journalCheck(subject, dataDir, ackedIds) {
  const rows = countRows(subject.journal(dataDir));
  const missing = ackedIds.filter((id) => !rows.ids.has(id)).length;
  return `${fmt.int(ackedIds.length)} acknowledged ids, ${missing === 0 ? "all" : `${fmt.int(missing)} MISSING, the rest`} in the journal (${fmt.int(rows.notifications)} rows) -> ${missing === 0 ? "durable" : "NOT DURABLE"}`;
}

async function round(index) {
  const recipient = {uuid: null};
  const runs = [];
  for (const name of ["klaxon", ...(OTHER_GATEWAY ? ["klaxon-other"] : []), "baseline", "alertmanager"]) {
    console.log(`round ${index}: ${name} ...`);
    runs.push(await measure(name, recipient));
  }
  const [klaxon, baseline, am] = [runs[0], runs.at(-2), runs.at(-1)];
  console.log(`\nRound ${index} (measured ${LOAD.seconds} s each; only 2xx answers count as alerts)\n`);
  console.log(
    table([
      [
        "target",
        "alerts/s",
        "p50",
        "p99",
        "max",
        "non-2xx / errors / timeouts",
        "CPU per alert: server / generators",
        "generators (cores each)",
        "machine busy",
        "peak RSS",
        "body",
        "what it kept"
      ],
      ...runs.map((run) => [
        run.name,
        fmt.int(run.measured.alertsPerSecond),
        fmt.ms(run.measured.latency.p50),
        fmt.ms(run.measured.latency.p99),
        fmt.ms(run.measured.latency.max),
        `${run.measured.non2xx} / ${run.measured.errors} / ${run.measured.timeouts}`,
        `${run.cpuMsPerAlert.toFixed(3)} / ${run.generatorCpuMsPerAlert.toFixed(3)} ms`,
        `${run.measured.cpu.generatorShares.map((share) => share.toFixed(2)).join(" + ")}${run.measured.cpu.generatorBound ? " GENERATOR-BOUND" : ""}`,
        `${run.measured.cpu.machineCores.toFixed(2)} of ${cpus().length} cores`,
        fmt.mb(run.peakRssMb),
        `${run.bodyBytes} B`,
        run.kept
      ])
    ])
  );
  const ratio = klaxon.measured.alertsPerSecond / am.measured.alertsPerSecond;
  console.log(
    `\nklaxon / alertmanager: rate ${ratio.toFixed(2)}, p99 ${(klaxon.measured.latency.p99 / am.measured.latency.p99).toFixed(1)}x`
  );
  console.log(
    `klaxon / baseline:     rate ${(klaxon.measured.alertsPerSecond / baseline.measured.alertsPerSecond).toFixed(2)}, p99 ${(klaxon.measured.latency.p99 / baseline.measured.latency.p99).toFixed(1)}x`
  );
  console.log(
    `klaxon CPU per alert: ${(klaxon.cpuMsPerAlert / am.cpuMsPerAlert).toFixed(1)}x alertmanager's, ${(klaxon.cpuMsPerAlert / baseline.cpuMsPerAlert).toFixed(1)}x the baseline's`
  );
  if (OTHER_GATEWAY)
    console.log(
      `klaxon-other / alertmanager: rate ${(runs[1].measured.alertsPerSecond / am.measured.alertsPerSecond).toFixed(2)}, CPU per alert ${(runs[1].cpuMsPerAlert / am.cpuMsPerAlert).toFixed(1)}x`
    );
  console.log(
    `baseline / alertmanager: rate ${(baseline.measured.alertsPerSecond / am.measured.alertsPerSecond).toFixed(2)}`
  );
  const durable = klaxon.kept.endsWith("-> durable");
  const p99 = klaxon.measured.latency.p99;
  const bound = runs.filter((run) => run.measured.cpu.generatorBound).map((run) => run.name);
  if (bound.length)
    console.log(
      `GENERATOR-BOUND: ${bound.join(", ")}: a generator used nearly a whole core, so that rate is the client's ceiling and this round's ratio is not a finding`
    );
  const cpuRatio = klaxon.cpuMsPerAlert / baseline.cpuMsPerAlert;
  console.log(
    `target: klaxon's CPU per durable alert <= ${TARGET_CPU_RATIO}x the baseline's, p99 <= ${TARGET_P99_MS} ms: ${cpuRatio.toFixed(2)}x, p99 ${fmt.ms(p99)}, ${durable ? "durable" : "NOT durable"} -> ` +
      `${bound.length ? "NO VERDICT (generator-bound)" : verdict(cpuRatio <= TARGET_CPU_RATIO && p99 <= TARGET_P99_MS && durable)}\n`
  );
}

async function main() {
  assertGatewayBuilt();
  if (!existsSync(ALERTMANAGER))
    throw new Error(`${ALERTMANAGER} is missing: apt-get install prometheus-alertmanager (or set BENCH_ALERTMANAGER)`);
  console.log(`bench:compare  ${new Date().toISOString()}`);
  console.log(describeMachine());
  console.log(describeChannel());
  console.log(
    `load: autocannon in ${GENERATORS} separate generator process(es), ${LOAD.connections} connections in all, pipelining 1, ${LOAD.warmupSeconds} s warm-up then ${LOAD.seconds} s measured per target, ` +
      `${BODY_BYTES}-byte JSON bodies (a different alert each request), loopback 127.0.0.1, ${ROUNDS} round(s)`
  );
  console.log(
    `klaxon: ${relative(process.cwd(), GATEWAY_ENTRY)}, answers 202 after an fsynced group commit; baseline: node:http + better-sqlite3, same rows and commits;`
  );
  if (OTHER_GATEWAY)
    console.log(
      `klaxon-other: ${relative(process.cwd(), OTHER_GATEWAY)} (BENCH_OTHER_GATEWAY), measured like klaxon, right after it`
    );
  console.log("alertmanager: one alert per POST to /api/v2/alerts, gossip off, kept in memory only.");
  console.log(
    "the generators share the cores with the server under test (and anything else running here): compare ratios within one round.\n"
  );
  for (let index = 1; index <= ROUNDS; index++) await round(index);
  if (mailSink.server)
    console.log(
      `emails the loopback SMTP sink took over the whole bench (all Klaxon starts): ${fmt.int(mailSink.received)}`
    );
}

await runBench("bench:compare", main);
