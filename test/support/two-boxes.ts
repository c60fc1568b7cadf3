import {mkdirSync, readFileSync} from "node:fs";
import {join} from "node:path";
import {launchGatewayProcess, type LaunchedGateway, type LaunchOptions} from "./gateway-process.js";
import {requireLitestream} from "./litestream.js";
import {tempDir} from "./gateway.js";
import {startSshd, type Sshd} from "./sshd.js";
import {startSmtpPeer, type SmtpPeer} from "./smtp-peer.js";
import {ModemSimulator} from "./modem-simulator.js";

/**
 * One box of a replicated pair as two gateway processes on loopback run it: its own address,
 * data dir and incoming folder, the sshd through which the other box's Litestream writes into
 * that folder, and its own channels: an SMTP server and a modem on a real pty, so what a box
 * pages is seen where it arrives.
 */
export interface BoxPlan {
  name: string;
  host: string;
  port: number;
  dataDir: string;
  incoming: string;
  sshd: Sshd;
  smtp: SmtpPeer;
  modem: ModemSimulator;
}

const running: LaunchedGateway[] = [];
// Stopped after the gateways, so no gateway meets its channel or replica target gone.
const services: Array<{stop(): Promise<void>}> = [];

export async function planBox(name: string, host: string, port: number): Promise<BoxPlan> {
  const root = tempDir();
  const incoming = join(root, "incoming");
  mkdirSync(incoming);
  const sshd = await startSshd(host);
  services.push(sshd);
  const smtp = await startSmtpPeer();
  services.push(smtp);
  const modem = await ModemSimulator.start("sim800");
  services.push(modem);
  return {name, host, port, dataDir: join(root, "data"), incoming, sshd, smtp, modem};
}

export const urlOf = (box: BoxPlan) => `http://${box.host}:${box.port}`;

/**
 * A box as the installed gateway runs it, shipping over SFTP into the other's incoming folder,
 * following its own, and paging through its own SMTP server and modem.
 */
export function launchBox(
  box: BoxPlan,
  other: BoxPlan,
  role: "active" | "standby",
  env: Record<string, string> = {},
  options: LaunchOptions = {}
): LaunchedGateway {
  mkdirSync(box.dataDir, {recursive: true});
  const launched = launchGatewayProcess(
    box.dataDir,
    {
      KLAXON_HOST: box.host,
      KLAXON_PORT: String(box.port),
      KLAXON_LOG_LEVEL: "info",
      KLAXON_REPLICATION_ROLE: role,
      KLAXON_REPLICATION_BOX_NAME: box.name,
      KLAXON_REPLICATION_PEER: urlOf(other),
      KLAXON_REPLICATION_REPLICA: `sftp://root@${other.host}:${other.sshd.port}${other.incoming}`,
      KLAXON_REPLICATION_SFTP_KEY_FILE: other.sshd.clientKeyFile,
      KLAXON_REPLICATION_SFTP_HOST_KEY: other.sshd.hostKey,
      KLAXON_REPLICATION_INCOMING: box.incoming,
      KLAXON_REPLICATION_LITESTREAM: requireLitestream(),
      KLAXON_SMTP_HOST: "127.0.0.1",
      KLAXON_SMTP_PORT: String(box.smtp.port),
      KLAXON_SMTP_FROM: `${box.name}@plant.lan`,
      KLAXON_MODEM_PORT: box.modem.devicePath,
      // The load and the retries of the takeover test are faster than a client's default budget.
      KLAXON_RATE_LIMIT_PER_SECOND: "10000",
      KLAXON_RATE_LIMIT_BURST: "10000",
      ...env
    },
    20_000,
    {...options, ownGroup: true}
  );
  running.push(launched);
  return launched;
}

/**
 * Ends every box launched and then their sshds, SMTP servers and modems. SIGTERM first: a gateway
 * stops its Litestream on the way out; SIGKILL only if it does not end.
 */
export async function stopBoxes(): Promise<void> {
  for (const box of running.splice(0)) {
    box.child.kill("SIGTERM");
    const killer = setTimeout(() => box.child.kill("SIGKILL"), 15_000);
    await box.exited;
    clearTimeout(killer);
  }
  for (const service of services.splice(0)) await service.stop();
}

/** Pulls a box's power: SIGKILL to its whole process group, the gateway and its Litestream at once. */
export async function powerCut(box: LaunchedGateway): Promise<void> {
  process.kill(-box.child.pid!, "SIGKILL");
  await box.exited;
}

/** A box's /healthz, or null while it does not answer 200. */
export async function health(box: BoxPlan): Promise<{role?: string; epoch?: number | null} | null> {
  try {
    const response = await fetch(`${urlOf(box)}/healthz`, {signal: AbortSignal.timeout(1000)});
    return response.status === 200 ? ((await response.json()) as {role?: string}) : null;
  } catch {
    return null;
  }
}

export async function call(box: BoxPlan, key: string, method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(urlOf(box) + path, {
    method,
    headers: {"X-API-Key": key, "Content-Type": "application/json", ...headers},
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000)
  });
  const text = await response.text();
  return {status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null};
}

/** Whether a process runs (a zombie nobody reaped does not count). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
