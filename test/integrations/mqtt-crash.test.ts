import {readFileSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startGatewayProcess, type GatewayProcess} from "../support/gateway-process.js";
import {startSmtpPeer, type SmtpPeer} from "../support/smtp-peer.js";
import {startMosquitto, type Mosquitto} from "../support/mosquitto.js";
import {eventually} from "../support/eventually.js";
import {tempDir} from "../support/gateway.js";

// A message the gateway has received but not committed when it is killed with SIGKILL: the
// broker never got its PUBACK, so it delivers the message again to the restarted gateway, which
// pages for it exactly once. The commit is held back for real: a second SQLite connection holds
// the journal's write lock (BEGIN IMMEDIATE) while the message arrives.
let broker: Mosquitto;
let smtp: SmtpPeer;
beforeAll(async () => {
  broker = await startMosquitto();
  smtp = await startSmtpPeer();
});
afterAll(async () => {
  await Promise.all([broker.stop(), smtp.stop()]);
});

async function api(gateway: GatewayProcess, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(gateway.url + path, {
    method,
    headers: {"X-API-Key": key, ...(body === undefined ? {} : {"Content-Type": "application/json"})},
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  return {status: response.status, body: (await response.json()) as any};
}

const mailsSaying = (text: string) => smtp.messages.filter((mail) => mail.text?.includes(text)).length;

describe("an MQTT message received but not committed when the gateway dies", () => {
  it("is delivered again by the broker after the restart, and pages exactly once", async () => {
    const dataDir = tempDir("klaxon-mqtt-crash-");
    const env = {
      KLAXON_SMTP_HOST: "127.0.0.1",
      KLAXON_SMTP_PORT: String(smtp.port),
      KLAXON_SMTP_FROM: "klaxon@factory.lan"
    };
    let gateway = await startGatewayProcess(dataDir, env);
    let lock: Database.Database | null = null;
    try {
      const key = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();
      const recipient = await api(gateway, key, "POST", "/api/v1/recipients", {
        name: "Maria",
        email: "maria@factory.lan",
        escalation: {ack_timeout_seconds: 600, repeat: 0}
      });
      expect(recipient.status).toBe(201);
      const created = await api(gateway, key, "POST", "/api/v1/integrations", {
        name: "plant broker",
        kind: "mqtt",
        target: recipient.body.uuid,
        default_priority: "critical",
        broker_url: broker.url,
        topics: ["plant/#"]
      });
      expect(created.status).toBe(201);
      const path = `/api/v1/integrations/${created.body.id}`;
      const first = gateway;
      await eventually(
        "connected to the broker",
        async () => (await api(first, key, "GET", path)).body.connection,
        (connection) => connection?.connected === true
      );

      lock = new Database(join(dataDir, "journal.sqlite"));
      lock.exec("BEGIN IMMEDIATE");
      broker.publish("plant/boiler", JSON.stringify({alert_id: "boiler-7", action: "fire", title: "Boiler 7 trip"}));
      // The gateway received it and its commit failed on the held lock: the message is still the broker's.
      await eventually(
        "the message taken but not committed",
        () => first.lines.some((line) => line.includes("not committed")),
        (seen) => seen,
        20_000
      );
      first.child.kill("SIGKILL");
      await first.exited;
      lock.exec("ROLLBACK");
      expect(mailsSaying("Boiler 7 trip")).toBe(0);

      gateway = await startGatewayProcess(dataDir, env);
      // Closed only now: the last connection to close checkpoints the WAL and deletes it, and the
      // gateway would rightly refuse to start on a journal whose WAL vanished after a crash.
      lock.close();
      lock = null;
      await eventually(
        "the page for the redelivered message",
        () => mailsSaying("Boiler 7 trip"),
        (count) => count >= 1,
        20_000
      );
      // A later message handled proves the gateway went past the redelivered one (messages are
      // handled in order); only then is "once" a fact.
      broker.publish("plant/press", JSON.stringify({alert_id: "press-2", action: "fire", title: "Press 2 jammed"}));
      const restarted = gateway;
      await eventually(
        "the later message accepted",
        async () => (await api(restarted, key, "GET", path)).body.stats,
        (stats) => stats?.accepted === 2,
        20_000
      );
      expect(mailsSaying("Boiler 7 trip")).toBe(1);
      const notifications = (await api(gateway, key, "GET", "/api/v1/notifications?limit=10")).body.items;
      expect(notifications.map((notification: {message: string}) => notification.message).sort()).toEqual([
        "Boiler 7 trip",
        "Press 2 jammed"
      ]);
    } finally {
      lock?.close();
      gateway.child.kill("SIGKILL");
      await gateway.exited;
    }
    // Two gateway starts, and a commit that waits out the journal's 5 s busy timeout.
  }, 90_000);
});
