import {spawn, type ChildProcess} from "node:child_process";
import {existsSync, mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {tmpdir} from "node:os";
import {join} from "node:path";

export const ALERTMANAGER_BINARY = "/usr/bin/prometheus-alertmanager";

/** An alert as Alertmanager's API lists it. */
export interface HeldAlert {
  fingerprint: string;
  labels: Record<string, string>;
  status: {state: string};
}

/** A real Prometheus Alertmanager on a loopback port, in a temp dir, with gossip off. */
export interface AlertmanagerPeer {
  url: string;
  /** What it printed, for failure messages. */
  output(): string;
  /** Pushes alerts through its API (POST /api/v2/alerts). */
  push(alerts: unknown[]): Promise<void>;
  /** The alerts it holds (GET /api/v2/alerts), with their fingerprints. */
  alerts(): Promise<HeldAlert[]>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address() as {port: number};
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`alertmanager exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(`${url}/-/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`alertmanager did not become ready:\n${output()}`);
}

/**
 * Starts Alertmanager with one route to a webhook receiver at `webhookUrl`. Grouping waits are
 * one second so a test sees notifications quickly; a missing binary fails, never skips.
 */
export async function startAlertmanager(webhookUrl: string): Promise<AlertmanagerPeer> {
  if (!existsSync(ALERTMANAGER_BINARY))
    throw new Error(`${ALERTMANAGER_BINARY} is missing: install Debian's prometheus-alertmanager package`);
  const dir = mkdtempSync(join(tmpdir(), "klaxon-alertmanager-"));
  const config = [
    "global:",
    "  resolve_timeout: 1m",
    "route:",
    "  receiver: klaxon",
    "  group_by: ['alertname']",
    "  group_wait: 1s",
    "  group_interval: 1s",
    "  repeat_interval: 1h",
    "receivers:",
    "  - name: klaxon",
    "    webhook_configs:",
    `      - url: '${webhookUrl}'`,
    "        send_resolved: true",
    ""
  ].join("\n");
  writeFileSync(join(dir, "alertmanager.yml"), config);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    ALERTMANAGER_BINARY,
    [
      `--config.file=${join(dir, "alertmanager.yml")}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
      "--log.level=debug"
    ],
    {stdio: ["ignore", "pipe", "pipe"]}
  );
  let printed = "";
  child.stdout?.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  const output = () => printed;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitUntilReady(url, child, output);
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, {recursive: true, force: true});
    throw error;
  }
  return {
    url,
    output,
    async push(alerts) {
      const response = await fetch(`${url}/api/v2/alerts`, {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(alerts)
      });
      if (response.status !== 200)
        throw new Error(`alertmanager refused the alerts: ${response.status} ${await response.text()}`);
    },
    async alerts() {
      return (await (await fetch(`${url}/api/v2/alerts`)).json()) as HeldAlert[];
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, {recursive: true, force: true});
    }
  };
}
