import {spawn, spawnSync, type ChildProcess} from "node:child_process";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {tmpdir} from "node:os";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import {expect} from "vitest";
import {eventually} from "./eventually.js";
import type {TestGateway} from "./gateway.js";

/**
 * Debian's mosquitto on a free loopback port, anonymous, with persistence in a temp dir (so a
 * restart keeps sessions and queued messages). `down()` stops it, `up()` starts it on the same port.
 */
export interface Mosquitto {
  port: number;
  url: string;
  /** Publishes with mosquitto_pub at QoS 1; returns once the broker has acknowledged it. */
  publish(topic: string, payload: string | Buffer): void;
  /** Publishes each line as its own QoS 1 message, in one connection (mosquitto_pub -l): a flood. */
  publishLines(topic: string, lines: string[]): void;
  /** Publishes at QoS 1 as the topic's retained message (mosquitto_pub -r); "" clears it. */
  publishRetained(topic: string, payload: string): void;
  /**
   * A paced flood from its own process (mqtt-flood.child.mjs): `count` QoS 1 telemetry messages
   * at `perSecond` on `topics` topics under `prefix`; resolves once the broker acknowledged all.
   */
  flood(prefix: string, options: {count: number; perSecond: number; topics: number}): Promise<{sent: number}>;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

const MOSQUITTO = "/usr/sbin/mosquitto";
const FLOOD_CHILD = join(dirname(fileURLToPath(import.meta.url)), "mqtt-flood.child.mjs");

/** What the broker is set up with beyond the defaults here. */
export interface MosquittoOptions {
  /** A port to reuse (a broker that comes up later where the gateway expects it). */
  port?: number;
  /**
   * Messages queued per client beyond those in flight: 10,000 here, so floods and crashes in
   * tests do not lose messages; mosquitto ships with 1,000, which the flood test uses.
   */
  maxQueuedMessages?: number;
}

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const {port} = server.address() as {port: number};
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function waitForListening(child: ChildProcess, output: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mosquitto did not start:\n${output.join("")}`)), 10_000);
    const check = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join("").includes("Opening ipv4 listen socket")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    child.stderr?.on("data", check);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`mosquitto exited with ${code}:\n${output.join("")}`));
    });
  });
}

function mosquittoPub(port: number, topic: string, mode: string[], input: string | Buffer): void {
  const result = spawnSync("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic, ...mode], {
    input
  });
  if (result.status !== 0) throw new Error(`mosquitto_pub failed: ${result.stderr.toString()}`);
}

function floodFrom(url: string, prefix: string, options: {count: number; perSecond: number; topics: number}) {
  const {count, perSecond, topics} = options;
  const child = spawn(process.execPath, [FLOOD_CHILD, url, String(count), String(perSecond), prefix, String(topics)], {
    stdio: ["ignore", "pipe", "pipe"]
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<{sent: number}>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(output) as {sent: number}) : reject(new Error(`flood exited ${code}: ${output}`))
    )
  );
}

/** Starts the broker (`port` or a number: the port to reuse). */
export async function startMosquitto(options: MosquittoOptions | number = {}): Promise<Mosquitto> {
  const {port, maxQueuedMessages = 10_000} = typeof options === "number" ? {port: options} : options;
  const dir = mkdtempSync(join(tmpdir(), "klaxon-mosquitto-"));
  const chosen = port ?? (await freePort());
  const configFile = join(dir, "mosquitto.conf");
  writeFileSync(
    configFile,
    [
      `listener ${chosen} 127.0.0.1`,
      "allow_anonymous true",
      "persistence true",
      `persistence_location ${dir}/`,
      "log_dest stderr",
      "log_type error",
      "log_type warning",
      "log_type notice",
      "log_type information",
      `max_queued_messages ${maxQueuedMessages}`,
      ""
    ].join("\n")
  );
  let child: ChildProcess | null = null;
  const up = async () => {
    const output: string[] = [];
    child = spawn(MOSQUITTO, ["-c", configFile], {stdio: ["ignore", "pipe", "pipe"]});
    await waitForListening(child, output);
  };
  const down = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((done) => {
      running.on("exit", () => done());
      running.kill("SIGTERM");
    });
  };
  await up();
  const url = `mqtt://127.0.0.1:${chosen}`;
  return {
    port: chosen,
    url,
    publish(topic, payload) {
      mosquittoPub(chosen, topic, ["-s"], payload);
    },
    publishLines(topic, lines) {
      mosquittoPub(chosen, topic, ["-l"], lines.join("\n") + "\n");
    },
    publishRetained(topic, payload) {
      mosquittoPub(chosen, topic, payload === "" ? ["-r", "-n"] : ["-r", "-s"], payload);
    },
    flood: (prefix, floodOptions) => floodFrom(url, prefix, floodOptions),
    up,
    down,
    async stop() {
      await down();
      rmSync(dir, {recursive: true, force: true});
    }
  };
}

/**
 * Adds an MQTT integration through the gateway's API (`kind` mqtt and `fields`) and waits until the
 * gateway is connected to its broker. Answers the integration's API path.
 */
export async function addConnectedMqttIntegration(gw: TestGateway, fields: Record<string, unknown>): Promise<string> {
  const created = await gw.call("POST", "/api/v1/integrations", {body: {kind: "mqtt", ...fields}});
  expect(created.status).toBe(201);
  const path = `/api/v1/integrations/${created.body.id}`;
  await eventually(
    "connected",
    async () => (await gw.call("GET", path)).body.connection,
    (connection) => connection?.connected === true
  );
  return path;
}
