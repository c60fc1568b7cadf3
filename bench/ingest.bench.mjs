// `npm run bench:ingest`: ingest throughput, latency, cold start and idle memory of the built
// gateway (dist/main.js), next to a bare baseline (bench/baseline-server.mjs: node:http +
// better-sqlite3 doing the same durable writes with the same group commit). Not a test: it
// prints figures and PASS/MISS verdicts against the targets, and exits 0 unless something
// crashes. Everything runs on 127.0.0.1; every child process is stopped before it exits.
//
// Env: BENCH_SECONDS (measured seconds per target, default 10), BENCH_WARMUP_SECONDS (default 2),
// BENCH_CONNECTIONS (default 50), BENCH_COLD_STARTS (default 3), BENCH_IDLE_SECONDS (how long each
// cold start then idles before its idle RSS is read, default 30), BENCH_KEEP_DATA=1 (keep the
// temporary data directories and print where they are), BENCH_GATEWAY (another built main.js).
// The child processes, the load driver and the report helpers are in bench/harness.mjs.

import {
  LOAD,
  SEND_PATH,
  BODY_BYTES,
  SUBJECTS,
  alertBody,
  assertGatewayBuilt,
  average,
  countRows,
  describeChannel,
  describeMachine,
  mailSink,
  envNumber,
  fmt,
  prepareKlaxon,
  probe,
  readProcStatus,
  runBench,
  startSubject,
  stopChild,
  stopCleanly,
  table,
  verdict
} from "./harness.mjs";
import {GENERATORS, drive} from "./load-driver.mjs";

const COLD_STARTS = Math.round(envNumber("BENCH_COLD_STARTS", 3));
// RSS is read twice per start: just after it (start-up's garbage still in the heap) and once idle.
// V8 collects and shrinks an idle heap (its memory reducer) some seconds after the last
// allocations; an idle gateway's memory is the figure after that, and the one the target is for.
const JUST_STARTED_MS = 2000;
const IDLE_MS = envNumber("BENCH_IDLE_SECONDS", 30) * 1000;

const TARGETS = {ratio: 0.7, alertsPerSecond: 2000, p99Ms: 50, idleRssMb: 120, coldStartMs: 1500};

/**
 * Cold start (spawn to first 200 on /healthz), RSS JUST_STARTED_MS after it and idle RSS
 * IDLE_MS after it (no request in between), over `runs` fresh starts.
 */
async function measureStart(subject, runs) {
  const starts = [];
  const justStarted = [];
  const rss = [];
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let i = 0; i < runs; i++) {
    const {record, startMs} = await startSubject(subject);
    starts.push(startMs);
    await sleep(JUST_STARTED_MS);
    justStarted.push(readProcStatus(record.child.pid).rssKb / 1024);
    await sleep(Math.max(0, IDLE_MS - JUST_STARTED_MS));
    rss.push(readProcStatus(record.child.pid).rssKb / 1024);
    await stopCleanly(record);
  }
  return {
    starts,
    justStarted,
    rss,
    startAvg: average(starts),
    rssAvg: average(rss),
    rssMax: Math.max(...rss),
    justStartedAvg: average(justStarted),
    justStartedMax: Math.max(...justStarted)
  };
}

/** Warm-up then measured load on a fresh instance; `sameBody` reuses the other target's body byte for byte. */
async function loadRun(subjectName, sameBody) {
  const subject = SUBJECTS[subjectName];
  const {record, port, dataDir} = await startSubject(subject);
  try {
    // The baseline needs no key and accepts Klaxon's recipient UUID.
    const prepared = subjectName === "klaxon" ? await prepareKlaxon(port, dataDir) : {headers: {}};
    const headers = prepared.headers;
    const body = sameBody ?? alertBody(prepared.recipientUuid);
    await probe(port, SEND_PATH, headers, body, 202);
    const ackedIds = [];
    const warmup = await drive({
      port,
      path: SEND_PATH,
      seconds: LOAD.warmupSeconds,
      connections: LOAD.connections,
      headers,
      body,
      ackedIds
    });
    const measured = await drive({
      port,
      path: SEND_PATH,
      seconds: LOAD.seconds,
      connections: LOAD.connections,
      headers,
      body,
      ackedIds,
      serverPid: record.child.pid
    });
    const loadedStatus = readProcStatus(record.child.pid);
    await stopCleanly(record);
    const rows = countRows(subject.journal(dataDir));
    const missing = ackedIds.filter((id) => !rows.ids.has(id)).length;
    // The probe send is one more 2xx the database holds.
    const answered2xx = 1 + warmup["2xx"] + measured["2xx"];
    return {
      body,
      warmup,
      measured,
      alertsPerSecond: measured.alertsPerSecond,
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

async function main() {
  assertGatewayBuilt();
  console.log(`bench:ingest  ${new Date().toISOString()}`);
  console.log(describeMachine());
  console.log(describeChannel());
  console.log(
    `load: autocannon in ${GENERATORS} generator process(es), ${LOAD.connections} connections, pipelining 1, ${LOAD.warmupSeconds} s warm-up then ${LOAD.seconds} s measured per target, ${BODY_BYTES}-byte JSON body, loopback 127.0.0.1`
  );
  console.log(
    "baseline: node:http + better-sqlite3, same four rows per alert, same WAL flush off the main thread and the same group commit"
  );
  console.log(
    "          (one transaction per event-loop turn via setImmediate), so the ratio measures framework/validation overhead, not fsync policy."
  );
  console.log(
    "load generator and servers share this machine's cores: figures are noisy; compare the ratio within one run.\n"
  );

  console.log(
    `cold start + RSS ${JUST_STARTED_MS / 1000} s after it + idle RSS ${IDLE_MS / 1000} s after it: ${COLD_STARTS} fresh starts of each ...`
  );
  const describeStarts = (measured) =>
    `starts ${measured.starts.map((ms) => fmt.ms(ms)).join(", ")}; RSS just started ${measured.justStarted.map((mb) => fmt.mb(mb)).join(", ")}; idle ${measured.rss.map((mb) => fmt.mb(mb)).join(", ")}`;
  const klaxonStart = await measureStart(SUBJECTS.klaxon, COLD_STARTS);
  console.log(`  klaxon   ${describeStarts(klaxonStart)}`);
  const baselineStart = await measureStart(SUBJECTS.baseline, COLD_STARTS);
  console.log(`  baseline ${describeStarts(baselineStart)}`);

  console.log(`\nload: klaxon (dist/main.js) ...`);
  const klaxon = await loadRun("klaxon");
  console.log(`  ${fmt.int(klaxon.alertsPerSecond)} alerts/s, p50 ${fmt.ms(klaxon.p50)}, p99 ${fmt.ms(klaxon.p99)}`);
  console.log(`  body (${Buffer.byteLength(klaxon.body)} bytes, the same for both targets): ${klaxon.body}`);
  console.log(`load: baseline (bench/baseline-server.mjs) ...`);
  const baseline = await loadRun("baseline", klaxon.body);
  console.log(
    `  ${fmt.int(baseline.alertsPerSecond)} alerts/s, p50 ${fmt.ms(baseline.p50)}, p99 ${fmt.ms(baseline.p99)}`
  );

  const ratio = klaxon.alertsPerSecond / baseline.alertsPerSecond;
  const cpuPerAlert = (measured) =>
    `${((measured.cpu.server * 1000) / measured["2xx"]).toFixed(3)} / ${((measured.cpu.generators * 1000) / measured["2xx"]).toFixed(3)} ms`;
  const nonOk = (run) =>
    `${fmt.int(run.measured.non2xx)} / ${fmt.int(run.measured.errors)} / ${fmt.int(run.measured.timeouts)}`;
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
      ["server / generator CPU per alert", cpuPerAlert(klaxon.measured), cpuPerAlert(baseline.measured), ""],
      [
        "generator-bound",
        klaxon.measured.cpu.generatorBound ? "YES" : "no",
        baseline.measured.cpu.generatorBound ? "YES" : "no",
        ""
      ],
      ["cold start (avg of " + COLD_STARTS + ")", fmt.ms(klaxonStart.startAvg), fmt.ms(baselineStart.startAvg), ""],
      [
        `RSS ${JUST_STARTED_MS / 1000} s after start (avg / max)`,
        `${fmt.mb(klaxonStart.justStartedAvg)} / ${fmt.mb(klaxonStart.justStartedMax)}`,
        `${fmt.mb(baselineStart.justStartedAvg)} / ${fmt.mb(baselineStart.justStartedMax)}`,
        ""
      ],
      [
        `idle RSS, ${IDLE_MS / 1000} s after start (avg / max)`,
        `${fmt.mb(klaxonStart.rssAvg)} / ${fmt.mb(klaxonStart.rssMax)}`,
        `${fmt.mb(baselineStart.rssAvg)} / ${fmt.mb(baselineStart.rssMax)}`,
        ""
      ],
      ["peak RSS under load", fmt.mb(klaxon.peakRssMb), fmt.mb(baseline.peakRssMb), ""]
    ])
  );
  for (const [name, run] of [
    ["klaxon", klaxon],
    ["baseline", baseline]
  ]) {
    const codes = Object.entries(run.measured.statusCodeStats)
      .map(([code, {count}]) => `${code}: ${count}`)
      .join(", ");
    console.log(`${name} status codes (measured): ${codes || "none"}`);
  }

  console.log("\nDurability check (after SIGTERM, database opened read-only)");
  for (const [name, run] of [
    ["klaxon", klaxon],
    ["baseline", baseline]
  ]) {
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

  if (mailSink.server)
    console.log(
      `  emails the loopback SMTP sink took over the whole bench (all Klaxon starts): ${fmt.int(mailSink.received)}`
    );

  const checks = [
    [`ratio klaxon/baseline >= ${TARGETS.ratio}`, ratio.toFixed(2), ratio >= TARGETS.ratio],
    [
      `durable alerts/s >= ${fmt.int(TARGETS.alertsPerSecond)}`,
      fmt.int(klaxon.alertsPerSecond),
      klaxon.alertsPerSecond >= TARGETS.alertsPerSecond
    ],
    [`p99 <= ${TARGETS.p99Ms} ms`, fmt.ms(klaxon.p99), klaxon.p99 <= TARGETS.p99Ms],
    [
      `idle RSS <= ${TARGETS.idleRssMb} MB (max of ${COLD_STARTS}, ${IDLE_MS / 1000} s idle)`,
      fmt.mb(klaxonStart.rssMax),
      klaxonStart.rssMax <= TARGETS.idleRssMb
    ],
    [
      `cold start <= ${TARGETS.coldStartMs} ms (avg of ${COLD_STARTS})`,
      fmt.ms(klaxonStart.startAvg),
      klaxonStart.startAvg <= TARGETS.coldStartMs
    ]
  ];
  console.log("\nTargets (klaxon)\n");
  console.log(
    table([["target", "measured", "verdict"], ...checks.map(([name, value, ok]) => [name, value, verdict(ok)])])
  );

  for (const [name, run] of [
    ["klaxon", klaxon],
    ["baseline", baseline]
  ]) {
    const lines = run.log.split("\n").filter((line) => line.trim() !== "" && !/^listening \d+$/.test(line));
    if (lines.length > 0)
      console.log(
        `\n${name} server output (warn and above; last ${Math.min(lines.length, 5)} of ${lines.length} lines):\n${lines.slice(-5).join("\n")}`
      );
  }
}

await runBench("bench:ingest", main);
