import {afterAll, beforeAll, describe, expect, it, vi} from "vitest";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {startGatewayProcess, type GatewayProcess} from "../support/gateway-process.js";
import {tempDir} from "../support/gateway.js";
import {startSmtpPeer, type SmtpPeer} from "../support/smtp-peer.js";
import {startFakeBotApi, type FakeBotApi} from "../support/telegram-bot-api.js";
import {ModemSimulator} from "../support/modem-simulator.js";
import {signDelivery} from "../../src/lib/webhook-signing.js";

// Every secret the gateway holds, each refused by its peer so the error paths run too.
const SMTP_USER = "klaxon@factory.lan";
const SMTP_PASSWORD = "smtp-Pa55-e4c1f0b7a9";
const BOT_TOKEN = "123456789:AAHkLxN0tTheRealTokenZ9y8x7w6v5u4t3";
const MODEM_PIN = "73019482";
const DASHBOARD_PASSWORD = "dashboard-Pa55-9d2e7c41";

let smtp: SmtpPeer;
let botApi: FakeBotApi;
let modem: ModemSimulator;
let gateway: GatewayProcess & {url: string};
const secrets = new Map<string, string>();

async function call(
  method: string,
  path: string,
  options: {key?: string | null; body?: unknown; headers?: Record<string, string>} = {}
) {
  const headers: Record<string, string> = {...options.headers};
  if (options.key) headers["X-API-Key"] = options.key;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(gateway.url + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body)
  });
  const text = await response.text();
  return {status: response.status, body: text ? JSON.parse(text) : null};
}

beforeAll(async () => {
  smtp = await startSmtpPeer({auth: {user: SMTP_USER, password: "the-mailbox-password-changed"}});
  botApi = await startFakeBotApi("987654321:AAthePeerExpectsAnotherToken00000000");
  modem = await ModemSimulator.start("sim800", {sim: "pin", pin: "11112222"});
  const dataDir = tempDir("klaxon-log-scan-");
  gateway = await startGatewayProcess(dataDir, {
    KLAXON_LOG_LEVEL: "debug",
    KLAXON_SMTP_HOST: "127.0.0.1",
    KLAXON_SMTP_PORT: String(smtp.port),
    KLAXON_SMTP_USER: SMTP_USER,
    KLAXON_SMTP_PASSWORD: SMTP_PASSWORD,
    KLAXON_SMTP_FROM: SMTP_USER,
    KLAXON_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    KLAXON_TELEGRAM_API_URL: botApi.url,
    KLAXON_MODEM_PORT: modem.devicePath,
    KLAXON_MODEM_PIN: MODEM_PIN
  });
  const adminKey = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();
  secrets
    .set("admin API key", adminKey)
    .set("SMTP password", SMTP_PASSWORD)
    .set("Telegram bot token", BOT_TOKEN)
    .set("modem PIN", MODEM_PIN)
    .set("dashboard password", DASHBOARD_PASSWORD);
});
afterAll(async () => {
  gateway?.child.kill("SIGTERM");
  await gateway?.exited;
  await Promise.all([smtp?.stop(), botApi?.close(), modem?.stop()]);
});

/** Each secret in the forms a log line could carry it: as is, base64 (SMTP AUTH, Basic), and its parts. */
function forms(secret: string): string[] {
  const found = [secret, Buffer.from(secret).toString("base64"), Buffer.from(secret).toString("base64url")];
  const parts = secret.match(/^(?:klx_[a-z0-9]{8}_|whsec_|\d+:)(.{16,})$/);
  if (parts) found.push(parts[1]);
  return found;
}

describe("the log, with every secret set and every error path driven", () => {
  it("never contains a key, password, token, PIN or webhook secret, in plain or base64 form", async () => {
    const admin = secrets.get("admin API key")!;
    const key = (await call("POST", "/api/v1/keys", {key: admin, body: {name: "plc", scopes: ["notifications:send"]}}))
      .body.key as string;
    secrets.set("created API key", key);

    // One recipient per channel, so every channel's first step runs at once.
    const reachable = {
      email: {email: "maria@factory.lan", channel_order: ["email"]},
      telegram: {telegram_id: "424242", channel_order: ["telegram_voice"]},
      voice: {phone: "+4915112345678", channel_order: ["voice_call"]},
      sms: {phone: "+4915112345679", channel_order: ["sms"]}
    };
    const sent: string[] = [];
    for (const [name, fields] of Object.entries(reachable)) {
      const recipient = (
        await call("POST", "/api/v1/recipients", {
          key: admin,
          body: {name, ...fields, escalation: {ack_timeout_seconds: 3600, repeat: 0}}
        })
      ).body.uuid;
      const answer = await call("POST", "/api/v1/notifications/send", {
        key,
        body: {recipient_uuid: recipient, message: `via ${name}`, priority: "critical"}
      });
      expect(answer.status).toBe(202);
      sent.push(answer.body.notification_uuid);
    }

    // A webhook that cannot be delivered, an integration and a heartbeat whose URLs carry tokens.
    const webhook = await call("POST", "/api/v1/webhooks", {
      key: admin,
      body: {url: "http://127.0.0.1:9/klaxon", events: ["*"]}
    });
    secrets.set("webhook secret", webhook.body.secret);
    const rotated = await call("POST", `/api/v1/webhooks/${webhook.body.id}/rotate-secret`, {key: admin});
    secrets.set("rotated webhook secret", rotated.body.secret);
    const target = (await call("GET", "/api/v1/recipients", {key: admin})).body.items[0].uuid;
    const integration = (
      await call("POST", "/api/v1/integrations", {key: admin, body: {name: "plc", kind: "generic", target}})
    ).body;
    secrets
      .set("integration secret", integration.secret)
      .set("integration URL token", new URL(integration.url).searchParams.get("token")!);
    const heartbeat = (
      await call("POST", "/api/v1/heartbeats", {key: admin, body: {name: "press-7", period_seconds: 60, target}})
    ).body;
    secrets.set("heartbeat ping token", new URL(heartbeat.ping_url).pathname.split("/").pop()!);

    // The paths that could leak: refusals of every credential, and the credentials used for real.
    const event = {alert_id: "tank-3", action: "fire", title: "level low"};
    const url = new URL(integration.url);
    expect((await call("POST", url.pathname + url.search, {body: event})).status).toBe(202);
    const signed = {...signDelivery({secret: integration.secret}, "msg_1", Date.now(), JSON.stringify(event))};
    expect((await call("POST", url.pathname, {body: event, headers: signed})).status).toBe(202);
    expect((await call("POST", url.pathname, {body: {...event, title: "altered"}, headers: signed})).status).toBe(401);
    expect(
      (await call("POST", `${url.pathname}?token=${secrets.get("integration URL token")}x`, {body: event})).status
    ).toBe(401);
    expect((await call("GET", new URL(heartbeat.ping_url).pathname)).status).toBe(200);
    expect((await call("GET", "/api/v1/notifications", {key: `${key}x`})).status).toBe(401);
    expect((await call("GET", "/api/v1/keys", {key})).status).toBe(403);
    expect(
      (
        await call("POST", "/api/v1/notifications/send", {
          key,
          body: {recipient_uuid: target, message: key, priority: "high", source: admin}
        })
      ).status
    ).toBe(202);
    expect(
      (await call("POST", "/dashboard/api/password", {body: {admin_key: key, password: DASHBOARD_PASSWORD}})).status
    ).toBe(401);
    expect(
      (await call("POST", "/dashboard/api/password", {body: {admin_key: admin, password: DASHBOARD_PASSWORD}})).status
    ).toBe(204);
    expect((await call("POST", "/dashboard/api/sign-in", {body: {password: `${DASHBOARD_PASSWORD}x`}})).status).toBe(
      401
    );
    expect((await call("POST", "/dashboard/api/sign-in", {body: {password: DASHBOARD_PASSWORD}})).status).toBe(200);

    // Every channel's attempt has ended, refused by its peer: the errors were logged by now.
    await vi.waitFor(
      async () => {
        for (const id of sent) {
          const {attempts} = (await call("GET", `/api/v1/notifications/${id}`, {key: admin})).body;
          expect(attempts.length, id).toBeGreaterThan(0);
          expect(
            attempts.every((attempt: {outcome: string}) => attempt.outcome !== "pending"),
            id
          ).toBe(true);
        }
      },
      {timeout: 30_000, interval: 200}
    );
    // The SMTP peer saw the real password, so the gateway did use it where a log line could have caught it.
    expect(smtp.logins.some((login) => login.password === SMTP_PASSWORD)).toBe(true);

    const log = gateway.lines.join("\n");
    expect(gateway.lines.length).toBeGreaterThan(50);
    for (const [name, secret] of secrets) {
      for (const form of forms(secret))
        expect(log.includes(form), `${name} (${form === secret ? "plain" : "encoded or part"}) in the log`).toBe(false);
    }
    // Every line is structured (JSON with a level), so nothing bypassed the redacting logger.
    expect(gateway.lines.filter((line) => !/^\{.*"level":"(debug|info|warn|error)"/.test(line))).toEqual([]);
  });
});
