// Shared parts of the load benchmarks (bench/ingest.bench.mjs, bench/compare.bench.mjs), in one
// import: the settings (harness-env.mjs), the servers under test as child processes on 127.0.0.1
// with fresh data directories (harness-processes.mjs), the subjects, the SMTP sink, Klaxon's
// preparation (key, recipient, alert body) and the journal check (harness-subjects.mjs) and the
// report helpers (harness-report.mjs); the load driver is bench/load-driver.mjs. Every child
// process is killed and every data directory removed when the bench exits.
//
// Env read here: BENCH_SECONDS (measured seconds per target, default 10), BENCH_WARMUP_SECONDS
// (default 2), BENCH_CONNECTIONS (default 50), BENCH_KEEP_DATA=1 (keep the data directories and
// print where they are), BENCH_GATEWAY (a built main.js to measure instead of dist/main.js, e.g.
// a build of another commit, for before/after figures), BENCH_CPU_PROF (a directory: the gateway
// runs with `node --cpu-prof` and writes one .cpuprofile there per start; read it with
// `node bench/cpu-profile-summary.mjs <file>`), BENCH_CHANNEL (`email`, the default: the bench
// recipient's email goes to a loopback SMTP sink, as on a gateway set up to page someone; `none`:
// no channel is configured, so every alert runs its whole chain at once, each step skipped).

export {CHANNEL, LOAD, envNumber} from "./harness-env.mjs";
export {request, runBench, startSubject, stopChild, stopCleanly} from "./harness-processes.mjs";
export {
  ALERT_TEXT,
  BODY_BYTES,
  GATEWAY_ENTRY,
  SEND_PATH,
  SUBJECTS,
  alertBody,
  assertGatewayBuilt,
  countRows,
  describeChannel,
  klaxonSubject,
  mailSink,
  padBody,
  prepareKlaxon,
  probe
} from "./harness-subjects.mjs";
export {average, describeMachine, fmt, table, verdict} from "./harness-report.mjs";
export {cpuSeconds, readProcStatus} from "./proc-stat.mjs";
