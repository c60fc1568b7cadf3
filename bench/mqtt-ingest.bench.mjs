// `npm run bench:mqtt`: how many MQTT messages per second the built gateway (dist/main.js) turns
// into durable alerts. Debian's mosquitto runs on a loopback port with persistence off; a
// separate mosquitto_pub process publishes BENCH_MQTT_MESSAGES generic events (each its own
// alert_id, so each is a new alert) at QoS 1 on one connection; the gateway's MQTT integration
// takes them one at a time and acknowledges each only after its commit. The figure is messages
// counted accepted by the integration over the time from the first publish to the last commit,
// checked against the journal's notification rows after a clean stop. Not a test: it prints.
//
// Env: BENCH_MQTT_MESSAGES (default 5000), BENCH_KEEP_DATA=1, BENCH_GATEWAY (another built main.js).

import {spawn} from "node:child_process";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {performance} from "node:perf_hooks";
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
const TOPIC = "bench/plant/line1";
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

/** mosquitto on a free loopback port; resolves once it listens. */
async function startBroker(dir) {
  const port = await freePort();
  const config = join(dir, "mosquitto.conf");
  writeFileSync(config, `listener ${port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\nlog_dest stderr\n`);
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
  return {port, child};
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

async function main() {
  assertGatewayBuilt();
  console.log(`bench:mqtt  ${new Date().toISOString()}`);
  console.log(describeMachine());
  const brokerDir = mkdtempSync(join(tmpdir(), "klaxon-bench-mosquitto-"));
  const broker = await startBroker(brokerDir);
  const {record, port, dataDir} = await startSubject(SUBJECTS.klaxon);
  try {
    const {headers, recipientUuid} = await prepareKlaxon(port, dataDir);
    const created = await request(port, "POST", "/api/v1/integrations", {
      headers,
      body: {
        name: "bench broker",
        kind: "mqtt",
        target: recipientUuid,
        broker_url: `mqtt://127.0.0.1:${broker.port}`,
        topics: ["bench/#"]
      }
    });
    if (created.status !== 201) throw new Error(`creating the integration answered ${created.status}: ${created.text}`);
    const id = JSON.parse(created.text).id;
    const integration = async () =>
      JSON.parse((await request(port, "GET", `/api/v1/integrations/${id}`, {headers})).text);
    while (!(await integration()).connection?.connected) await sleep(20);

    const lines = Array.from({length: MESSAGES}, (_, index) =>
      JSON.stringify({alert_id: `bench-${index}`, action: "fire", title: `bench: line 1 sensor ${index} out of range`})
    );
    console.log(`publishing ${fmt.int(MESSAGES)} QoS 1 messages from a mosquitto_pub process on ${TOPIC} ...`);
    const startedAt = performance.now();
    const published = publishAll(broker.port, lines);
    let stats;
    for (;;) {
      stats = (await integration()).stats;
      if (stats.received >= MESSAGES) break;
      await sleep(10);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    await published;
    await stopCleanly(record);
    const rows = countRows(SUBJECTS.klaxon.journal(dataDir));
    console.log(
      `\n${fmt.int(stats.accepted / seconds)} messages/s turned into durable alerts ` +
        `(${fmt.int(stats.accepted)} accepted, ${fmt.int(stats.refused)} refused, ${fmt.int(stats.unmapped)} unmapped in ${seconds.toFixed(2)} s; ` +
        `journal after a clean stop: ${fmt.int(rows.notifications)} notifications)`
    );
  } finally {
    broker.child.kill("SIGTERM");
    rmSync(brokerDir, {recursive: true, force: true});
  }
}

await runBench("bench:mqtt", main);
