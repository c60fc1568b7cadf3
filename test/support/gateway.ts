import {mkdtempSync, readFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {startGateway, type Gateway} from "../../src/boot/gateway.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import type {Settings} from "../../src/settings/defaults.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Clock} from "../../src/lib/clock.js";
import type {ChannelDriver} from "../../src/channels/channel.js";
import {LogDriver} from "../../src/channels/log/log.driver.js";
import type {RunnerOptions} from "../../src/services/escalation/escalation-runner.service.js";
import {CHANNELS} from "../../src/domain/vocabulary.js";
import type {Logger} from "../../src/lib/logger.js";

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A running gateway on 127.0.0.1 with its own temp data dir, and a small client for it. */
export interface TestGateway {
  gateway: Gateway;
  url: string;
  dataDir: string;
  adminKey: string;
  logLines: string[];
  call<T = any>(
    method: string,
    path: string,
    options?: {key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string>}
  ): Promise<Answer<T>>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export type SettingsOverrides = Parameters<typeof settingsWith>[0];

export function tempDir(prefix = "klaxon-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Settings for every channel, so whether a channel works is up to its driver. */
export const ALL_CHANNELS_CONFIGURED: SettingsOverrides = {
  smtp: {host: "127.0.0.1", from: "klaxon@factory.lan"},
  modem: {port: "/dev/klaxon-modem"},
  telegram: {bot_token: "1:x"}
};

/** Development drivers on every channel: escalations run and wait for acknowledgement, delivering nothing. */
export function logDrivers(logger: Logger): ChannelDriver[] {
  return CHANNELS.map((channel) => new LogDriver(channel, logger));
}

export interface TestGatewayOptions {
  clock?: Clock;
  dataDir?: string;
  /**
   * The channel drivers for each start; development log drivers on every channel by default.
   * "production" builds the real drivers from the settings, as the installed gateway does.
   */
  drivers?: ((logger: Logger) => ChannelDriver[]) | "production";
  runner?: RunnerOptions;
}

export async function startTestGateway(
  overrides: SettingsOverrides = {},
  options: TestGatewayOptions = {}
): Promise<TestGateway> {
  const {clock, dataDir = tempDir(), drivers = logDrivers, runner} = options;
  const settings: Settings = settingsWith({host: "127.0.0.1", port: 0, data_dir: dataDir, ...overrides});
  const logLines: string[] = [];
  const logger = createLogger("debug", (line) => logLines.push(line));
  const gatewayOptions = () => ({
    logger,
    clock,
    runner,
    drivers: drivers === "production" ? undefined : drivers(logger)
  });
  let gateway = await startGateway(settings, gatewayOptions());
  const adminKey = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();

  const handle: TestGateway = {
    gateway,
    url: gateway.url,
    dataDir,
    adminKey,
    logLines,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = {...options.headers};
      const key = options.key === undefined ? adminKey : options.key;
      if (key !== null) headers["X-API-Key"] = key;
      let body: string | undefined = options.raw;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["Content-Type"] ??= "application/json";
      }
      const response = await fetch(handle.url + path, {method, headers, body});
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON (e.g. the docs page): keep the text
      }
      return {status: response.status, headers: response.headers, body: parsed as any};
    },
    async restart() {
      await gateway.stop();
      gateway = await startGateway({...settings, port: 0}, gatewayOptions());
      handle.gateway = gateway;
      handle.url = gateway.url;
    },
    async stop() {
      await gateway.stop();
      rmSync(dataDir, {recursive: true, force: true});
    }
  };
  return handle;
}

/** Creates a recipient through the API and returns its uuid. */
export async function createRecipient(gw: TestGateway, fields: Record<string, unknown> = {}): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/recipients", {
    body: {name: "Alice", phone: "+4915112345678", email: "alice@example.com", ...fields}
  });
  if (answer.status !== 201) throw new Error(`recipient not created: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.uuid;
}

/**
 * Row counts of the journal tables a send writes, to prove a rejected request stored nothing.
 * Waits until the escalation runner is idle first, so its background writes cannot race a count.
 */
export async function journalCounts(gw: TestGateway): Promise<Record<string, number>> {
  await gw.gateway.services.runner.idle();
  const db = gw.gateway.journal.db;
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as {n: number}).n;
  return {
    notifications: count("notifications"),
    escalations: count("escalations"),
    audit: count("audit"),
    events: count("events"),
    outbox: count("outbox"),
    idempotency: count("idempotency")
  };
}
