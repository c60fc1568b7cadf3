// `npm run bench:plc`: the CPU the built gateway (dist/main.js) spends polling Modbus devices
// (issue 35: 50 devices with 20 points each at 1 s must cost at most 5 % of one core).
// BENCH_PLC_DEVICES (50) modbus integrations, each its own TCP connection to pymodbus's server
// (test/support/modbus-server.py, in its own process, not measured) with BENCH_PLC_POINTS (20)
// points: three quarters holding registers (uint16, each with an alarm that never fires, so the
// conditioning runs on every reading), a quarter coils; two batched requests per device and poll.
// The gateway's own CPU (user + system, /proc) is measured over BENCH_PLC_SECONDS (30) after a
// warm-up, beside the same gateway idle with no integration. Not a test: it prints.

import {spawn} from "node:child_process";
import {createInterface} from "node:readline";
import {join} from "node:path";
import {ROOT} from "./harness-env.mjs";
import {
  assertGatewayBuilt,
  cpuSeconds,
  describeMachine,
  envNumber,
  prepareKlaxon,
  request,
  runBench,
  startSubject,
  stopCleanly,
  SUBJECTS
} from "./harness.mjs";

const DEVICES = Math.round(envNumber("BENCH_PLC_DEVICES", 50));
const POINTS = Math.round(envNumber("BENCH_PLC_POINTS", 20));
const SECONDS = envNumber("BENCH_PLC_SECONDS", 30);
const WARMUP_SECONDS = 10;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** pymodbus's server on a free loopback port; resolves once it listens. */
async function startDevice(port) {
  const child = spawn(
    join(ROOT, ".venv/bin/python"),
    [join(ROOT, "test/support/modbus-server.py"), "--tcp", String(port)],
    {
      stdio: ["pipe", "pipe", "pipe"]
    }
  );
  const lines = createInterface({input: child.stdout});
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Modbus server did not start: ${stderr}`)), 15_000);
    lines.on("line", (line) => {
      if (line === "ready") {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`the Modbus server exited (${code}): ${stderr}`)));
  });
  return child;
}

function points() {
  const registers = Math.round(POINTS * 0.75);
  return [
    ...Array.from({length: registers}, (_, index) => ({
      name: `r${index}`,
      table: "holding_register",
      address: 100 + index,
      type: "uint16",
      alarm: {when: ">", value: 60_000, deadband: 5, on_delay_seconds: 2, title: "r{value}"}
    })),
    ...Array.from({length: POINTS - registers}, (_, index) => ({
      name: `c${index}`,
      table: "coil",
      address: index,
      type: "bool"
    }))
  ];
}

/** The gateway's share of one core over `seconds`, in percent. */
async function cpuShare(pid, seconds) {
  const before = cpuSeconds(pid);
  await sleep(seconds * 1000);
  return ((cpuSeconds(pid) - before) / seconds) * 100;
}

async function main() {
  assertGatewayBuilt();
  console.log(describeMachine());
  const {record, port, dataDir} = await startSubject(SUBJECTS.klaxon);
  const {headers, recipientUuid} = await prepareKlaxon(port, dataDir);
  const devicePort = 20_000 + Math.floor(Math.random() * 20_000);
  const device = await startDevice(devicePort);
  try {
    const idle = await cpuShare(record.child.pid, SECONDS / 3);
    for (let index = 0; index < DEVICES; index++) {
      const res = await request(port, "POST", "/api/v1/integrations", {
        headers,
        body: {
          name: `press-${index}`,
          kind: "modbus",
          target: recipientUuid,
          modbus: {host: "127.0.0.1", port: devicePort, unit_id: 1, poll_interval_ms: 1000},
          points: points()
        }
      });
      if (res.status !== 201) throw new Error(`creating integration ${index} answered ${res.status}: ${res.text}`);
    }
    for (;;) {
      const ready = JSON.parse((await request(port, "GET", "/readyz", {headers})).text);
      const connected = ready.plc_links.filter((link) => link.state === "connected").length;
      if (connected === DEVICES) break;
      await sleep(500);
    }
    await sleep(WARMUP_SECONDS * 1000);
    const polling = await cpuShare(record.child.pid, SECONDS);
    // The devices kept pace: every point was read within the last poll or two (a slow server would flatter the figure).
    const listed = JSON.parse((await request(port, "GET", "/api/v1/integrations?limit=200", {headers})).text).items;
    const oldestMs = Math.max(
      ...listed.flatMap((integration) => integration.points.map((each) => Date.now() - Date.parse(each.state.read_at)))
    );
    const requests = DEVICES * 2;
    console.log(
      `\n${DEVICES} Modbus TCP devices x ${POINTS} points at 1 s (${requests} requests/s, ${DEVICES * POINTS} readings/s):` +
        `\n  gateway idle, no integration: ${idle.toFixed(2)} % of one core` +
        `\n  gateway polling:              ${polling.toFixed(2)} % of one core (${(polling - idle).toFixed(2)} % for the polling)` +
        `\n  oldest reading at the end:    ${oldestMs} ms old` +
        `\n  target (issue 35):            <= 5 %: ${polling <= 5 ? "met" : "MISSED"}`
    );
  } finally {
    device.kill("SIGTERM");
    await stopCleanly(record);
  }
}

await runBench("bench:plc", main);
