// `npm run bench:idle`: the built gateway's idle memory (issue 36 item 2). Each profile starts
// dist/main.js as the systemd unit does (its node flags and NODE_ENV, see harness-subjects.mjs) on a
// fresh data dir, waits for the first 200 on /healthz, sends nothing, and reads VmRSS from
// /proc/<pid>/status after BENCH_IDLE_SECONDS; then stops it. Not a test: it prints figures and
// PASS/MISS against the bounds, and exits 0 unless something crashes.
//
// Profiles (all on 127.0.0.1):
// - default: no config file (the embedded defaults);
// - sample config: config/klaxon.yaml, the fully commented file install.sh puts in /etc/klaxon;
// - every feature: SMTP (to a loopback sink), Telegram (a token, the API on a closed loopback
//   port), a modem port that does not exist, the SNMP trap listener and the email intake on free
//   ports. MQTT and PLC links are integrations made through the API, and replication needs a
//   second box, so they are not in it.
//
// Env: BENCH_IDLE_STARTS (fresh starts per profile, default 3), BENCH_IDLE_SECONDS (default 30),
// BENCH_IDLE_PROFILES (comma-separated names, default all three), and bench/harness.mjs's
// BENCH_GATEWAY (another build: before/after), BENCH_NODE_FLAGS (node flags after the unit's),
// BENCH_KEEP_DATA.

import {join} from "node:path";
import {createServer} from "node:net";
import {setTimeout as sleep} from "node:timers/promises";
import {
  assertGatewayBuilt,
  average,
  describeMachine,
  envNumber,
  fmt,
  klaxonSubject,
  readProcStatus,
  runBench,
  startSubject,
  stopCleanly,
  table,
  verdict
} from "./harness.mjs";
import {ROOT} from "./harness-env.mjs";

const STARTS = Math.round(envNumber("BENCH_IDLE_STARTS", 3));
const IDLE_SECONDS = envNumber("BENCH_IDLE_SECONDS", 30);
const BOUND_DEFAULT_MB = 110;
const BOUND_ALL_FEATURES_MB = 160;

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** The settings of each profile, as environment on top of the unit's (KLAXON_CONFIG="" is no file). */
const PROFILES = {
  default: {bound: BOUND_DEFAULT_MB, environment: async () => ({})},
  "sample config": {
    bound: BOUND_DEFAULT_MB,
    environment: async () => ({KLAXON_CONFIG: join(ROOT, "config", "klaxon.yaml")})
  },
  "every feature": {
    bound: BOUND_ALL_FEATURES_MB,
    environment: async () => ({
      KLAXON_SMTP_HOST: "127.0.0.1",
      KLAXON_SMTP_PORT: String(await freePort()),
      KLAXON_SMTP_FROM: "klaxon-bench@example.com",
      KLAXON_TELEGRAM_BOT_TOKEN: "123456:bench-token-not-real",
      KLAXON_TELEGRAM_API_URL: `http://127.0.0.1:${await freePort()}`,
      KLAXON_MODEM_PORT: "/dev/klaxon-bench-no-such-modem",
      KLAXON_SNMP_TRAP_PORT: String(await freePort()),
      KLAXON_INBOUND_EMAIL_PORT: String(await freePort())
    })
  }
};

const chosen = (process.env.BENCH_IDLE_PROFILES ?? Object.keys(PROFILES).join(","))
  .split(",")
  .map((name) => name.trim());
for (const name of chosen)
  if (!PROFILES[name])
    throw new Error(`BENCH_IDLE_PROFILES: no profile "${name}" (${Object.keys(PROFILES).join(", ")})`);

async function idleRss(name) {
  const profile = PROFILES[name];
  const base = klaxonSubject(undefined, `klaxon-${name.replace(/ /g, "-")}`);
  const samples = [];
  for (let start = 0; start < STARTS; start++) {
    const extra = await profile.environment();
    const subject = {...base, environment: async () => extra};
    const {record, startMs} = await startSubject(subject);
    await sleep(IDLE_SECONDS * 1000);
    const {rssKb} = readProcStatus(record.child.pid);
    await stopCleanly(record);
    samples.push({rssMb: rssKb / 1024, startMs});
    console.log(
      `  ${name}, start ${start + 1}: ${fmt.mb(rssKb / 1024)} after ${IDLE_SECONDS} s idle (served in ${fmt.ms(startMs)})`
    );
  }
  const rss = samples.map((sample) => sample.rssMb);
  return {name, bound: profile.bound, min: Math.min(...rss), avg: average(rss), max: Math.max(...rss)};
}

await runBench("bench:idle", async () => {
  assertGatewayBuilt();
  console.log(describeMachine());
  console.log(`${STARTS} fresh starts per profile, VmRSS after ${IDLE_SECONDS} s with no request\n`);
  const rows = [["profile", "idle RSS min / avg / max", "bound", "verdict (max)"]];
  for (const name of chosen) {
    const result = await idleRss(name);
    rows.push([
      result.name,
      `${fmt.mb(result.min)} / ${fmt.mb(result.avg)} / ${fmt.mb(result.max)}`,
      `<= ${result.bound} MB`,
      verdict(result.max <= result.bound)
    ]);
  }
  console.log(`\n${table(rows)}`);
});
