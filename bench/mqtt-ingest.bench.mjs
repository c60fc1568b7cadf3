// `npm run bench:mqtt`: how fast the built gateway (dist/main.js) takes MQTT messages, in three runs
// against Debian's mosquitto on loopback, each message QoS 1 from a publisher in its own process:
//  1. alerts: BENCH_MQTT_MESSAGES generic events, each its own alert_id (a new alert each), from
//     `mosquitto_pub -l`; messages/s turned into durable alerts, checked against the journal's
//     notification rows after a clean stop.
//  2. drain: BENCH_MQTT_DRAIN telemetry messages no mapping acts on, published as fast as the
//     broker takes them (its queue unbounded); messages/s the integration counted.
//  3. flood: BENCH_MQTT_FLOOD messages in BENCH_MQTT_FLOOD_SECONDS (82,400 in 20 s: what overflowed
//     the box's queue in issue 29) on 1,000 telemetry topics, through a broker with mosquitto's
//     default limits (20 in flight for v3 clients, 1,000 queued per client), while 19 critical
//     alarms are published on an alarm topic, spread over the flood; for each, the time from its
//     publish to its alert committed, and how many never arrived.
// Not a test: it prints. Env also: BENCH_KEEP_DATA=1, BENCH_GATEWAY (another built main.js).

import {spawn} from "node:child_process";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {performance} from "node:perf_hooks";
import mqtt from "mqtt";
import {ROOT} from "./harness-env.mjs";
import {
  SUBJECTS,
  assertGatewayBuilt,
  countRows,
  describeMachine,
  envNumber,
  fmt,
  prepareKlaxon,
  request,
  runBench,
  startSubject,
  stopCleanly
} from "./harness.mjs";

const MESSAGES = Math.round(envNumber("BENCH_MQTT_MESSAGES", 5000));
const DRAIN = Math.round(envNumber("BENCH_MQTT_DRAIN", 50_000));
const FLOOD = Math.round(envNumber("BENCH_MQTT_FLOOD", 82_400));
const FLOOD_SECONDS = envNumber("BENCH_MQTT_FLOOD_SECONDS", 20);
const PROBES = 19;
const TOPIC = "bench/plant/line1";
const FLOOD_CHILD = join(ROOT, "test/support/mqtt-flood.child.mjs");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** mosquitto on a free loopback port, with `limits` lines added; resolves once it listens. */
async function startBroker(dir, limits) {
  const port = await freePort();
  const config = join(dir, `mosquitto-${port}.conf`);
  writeFileSync(config, `listener ${port} 127.0.0.1\nallow_anonymous true\n${limits}\nlog_dest stderr\n`);
  const child = spawn("/usr/sbin/mosquitto", ["-c", config], {stdio: ["ignore", "pipe", "pipe"]});
  let output = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mosquitto did not start:\n${output}`)), 10_000);
    child.stderr.on("data", (chunk) => {
      output += chunk.toString();
      if (output.includes("Opening ipv4 listen socket")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`mosquitto exited with ${code}:\n${output}`)));
  });
  return {port, child, url: `mqtt://127.0.0.1:${port}`};
}

/** Publishes every line as its own QoS 1 message from a mosquitto_pub process; resolves when it exits. */
function publishAll(port, lines) {
  const child = spawn("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", TOPIC, "-l"], {
    stdio: ["pipe", "ignore", "pipe"]
  });
  child.stdin.end(lines.join("\n") + "\n");
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`mosquitto_pub exited with ${code}`))))
  );
}

/** The flood publisher in its own process; resolves with its summary once the broker acknowledged everything. */
function flood(url, count, perSecond, prefix) {
  const child = spawn(process.execPath, [FLOOD_CHILD, url, String(count), String(perSecond), prefix, "1000"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"]
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`the flood publisher exited with ${code}`))
    )
  );
}

/** An mqtt integration of the bench recipient on `broker`, once its client is connected; returns a reader of it. */
async function createIntegration({port, headers, recipientUuid}, broker, name, topics) {
  // The telemetry is mapped by nothing: kept and counted (unmapped: keep), not paged.
  const body = {
    kind: "mqtt",
    name,
    target: recipientUuid,
    unmapped: "keep",
    default_priority: "critical",
    broker_url: broker.url,
    topics
  };
  const created = await request(port, "POST", "/api/v1/integrations", {headers, body});
  if (created.status !== 201) throw new Error(`creating the integration answered ${created.status}: ${created.text}`);
  const id = JSON.parse(created.text).id;
  const read = async () => JSON.parse((await request(port, "GET", `/api/v1/integrations/${id}`, {headers})).text);
  while (!(await read()).connection?.connected) await sleep(20);
  return read;
}

/** Waits until the integration has counted `total` messages; the seconds since `startedAt`. */
async function countedBy(integration, total, startedAt) {
  for (;;) {
    const {stats} = await integration();
    if (stats.received >= total) return {stats, seconds: (performance.now() - startedAt) / 1000};
    await sleep(10);
  }
}

async function alertsRun(subject, broker) {
  const integration = await createIntegration(subject, broker, "bench alerts", ["bench/plant/#"]);
  const lines = Array.from({length: MESSAGES}, (_, index) =>
    JSON.stringify({alert_id: `bench-${index}`, action: "fire", title: `bench: line 1 sensor ${index} out of range`})
  );
  console.log(`\n1. alerts: ${fmt.int(MESSAGES)} QoS 1 generic events, each a new alert, from mosquitto_pub ...`);
  const startedAt = performance.now();
  const published = publishAll(broker.port, lines);
  const {stats, seconds} = await countedBy(integration, MESSAGES, startedAt);
  await published;
  console.log(
    `   ${fmt.int(stats.accepted / seconds)} messages/s turned into durable alerts ` +
      `(${fmt.int(stats.accepted)} accepted, ${fmt.int(stats.refused)} refused, ${fmt.int(stats.unmapped)} unmapped in ${seconds.toFixed(2)} s)`
  );
  return stats.accepted;
}

async function drainRun(subject, broker) {
  const integration = await createIntegration(subject, broker, "bench drain", ["drain/#"]);
  console.log(`\n2. drain: ${fmt.int(DRAIN)} QoS 1 telemetry messages no mapping acts on, unpaced ...`);
  const startedAt = performance.now();
  const published = flood(broker.url, DRAIN, 0, "drain/telemetry");
  const {stats, seconds} = await countedBy(integration, DRAIN, startedAt);
  const {seconds: publishSeconds} = await published;
  console.log(
    `   ${fmt.int(stats.received / seconds)} messages/s drained (${fmt.int(stats.received)} counted, ` +
      `${fmt.int(stats.unmapped)} unmapped, in ${seconds.toFixed(2)} s; the publisher took ${publishSeconds.toFixed(2)} s)`
  );
}

async function floodRun(subject, broker) {
  const integration = await createIntegration(subject, broker, "bench flood", ["plant/#"]);
  const rate = FLOOD / FLOOD_SECONDS;
  console.log(
    `\n3. flood: ${fmt.int(FLOOD)} telemetry messages in ${FLOOD_SECONDS} s (${fmt.int(rate)}/s) on 1,000 topics, ` +
      `broker at mosquitto's default limits, ${PROBES} critical alarms during it ...`
  );
  const prober = await mqtt.connectAsync(broker.url, {protocolVersion: 5, clean: true, reconnectPeriod: 0});
  const startedAt = performance.now();
  const published = flood(broker.url, FLOOD, rate, "plant/telemetry");
  const sentAt = [];
  const latencies = [];
  let seen = 0;
  const watching = (async () => {
    while (seen < PROBES && performance.now() - startedAt < (FLOOD_SECONDS + 15) * 1000) {
      const {accepted} = (await integration()).stats;
      while (seen < accepted && seen < sentAt.length) latencies.push(performance.now() - sentAt[seen++]);
      await sleep(20);
    }
  })();
  for (let probe = 0; probe < PROBES; probe++) {
    await sleep((FLOOD_SECONDS * 1000) / (PROBES + 1));
    sentAt.push(performance.now());
    await prober.publishAsync(
      `plant/alarms/probe-${probe}`,
      JSON.stringify({alert_id: `probe-${probe}`, action: "fire", title: `Probe alarm ${probe}`}),
      {qos: 1}
    );
  }
  await published;
  await watching;
  await prober.endAsync();
  const {stats} = await integration();
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    `   ${PROBES - latencies.length} of ${PROBES} alarms lost; alarm to committed alert: ` +
      `median ${fmt.int(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms, max ${fmt.int(sorted.at(-1) ?? 0)} ms; ` +
      `${fmt.int(stats.received - stats.accepted)} of ${fmt.int(FLOOD)} flood messages counted ` +
      `(${fmt.int(FLOOD - (stats.received - stats.accepted))} dropped by the broker)`
  );
}

async function main() {
  assertGatewayBuilt();
  console.log(`bench:mqtt  ${new Date().toISOString()}`);
  console.log(describeMachine());
  const brokerDir = mkdtempSync(join(tmpdir(), "klaxon-bench-mosquitto-"));
  const unbounded = await startBroker(brokerDir, "max_queued_messages 0");
  const stock = await startBroker(brokerDir, "");
  const {record, port, dataDir} = await startSubject(SUBJECTS.klaxon);
  try {
    const subject = {port, ...(await prepareKlaxon(port, dataDir))};
    const accepted = await alertsRun(subject, unbounded);
    await drainRun(subject, unbounded);
    await floodRun(subject, stock);
    await stopCleanly(record);
    const rows = countRows(SUBJECTS.klaxon.journal(dataDir));
    console.log(
      `\njournal after a clean stop: ${fmt.int(rows.notifications)} notifications (${fmt.int(accepted)} + ${PROBES} expected)`
    );
  } finally {
    unbounded.child.kill("SIGTERM");
    stock.child.kill("SIGTERM");
    rmSync(brokerDir, {recursive: true, force: true});
  }
}

await runBench("bench:mqtt", main);
