import {afterAll, afterEach, describe, expect, it} from "vitest";
import {mkdirSync, readdirSync, readFileSync} from "node:fs";
import {join} from "node:path";
import {launchGatewayProcess, type LaunchedGateway} from "../support/gateway-process.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {eventually} from "../support/eventually.js";
import {tempDir} from "../support/gateway.js";
import {startSshd, type Sshd} from "../support/sshd.js";

afterAll(endOrphanedLitestreams);

const running: LaunchedGateway[] = [];
const servers: Sshd[] = [];
afterEach(async () => {
  // SIGTERM: a gateway stops its Litestream on the way out; SIGKILL only if it does not end.
  for (const box of running.splice(0)) {
    box.child.kill("SIGTERM");
    const killer = setTimeout(() => box.child.kill("SIGKILL"), 15_000);
    await box.exited;
    clearTimeout(killer);
  }
  for (const server of servers.splice(0)) await server.stop();
});

/** Whether a process runs (a zombie nobody reaped does not count). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

interface BoxPlan {
  name: string;
  host: string;
  port: number;
  dataDir: string;
  incoming: string;
  /** The box's sshd, through which the other box's Litestream writes into `incoming`. */
  sshd: Sshd;
}

async function plan(name: string, host: string, port: number): Promise<BoxPlan> {
  const root = tempDir();
  const incoming = join(root, "incoming");
  mkdirSync(incoming);
  const sshd = await startSshd(host);
  servers.push(sshd);
  return {name, host, port, dataDir: join(root, "data"), incoming, sshd};
}

const urlOf = (box: BoxPlan) => `http://${box.host}:${box.port}`;

/** A box as the installed gateway runs it, shipping over SFTP into the other's incoming folder and following its own. */
function launch(box: BoxPlan, other: BoxPlan, role: "active" | "standby", env: Record<string, string> = {}) {
  mkdirSync(box.dataDir, {recursive: true});
  const launched = launchGatewayProcess(box.dataDir, {
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
    // The load and the retries below are faster than a client's default budget.
    KLAXON_RATE_LIMIT_PER_SECOND: "10000",
    KLAXON_RATE_LIMIT_BURST: "10000",
    ...env
  });
  running.push(launched);
  return launched;
}

async function health(box: BoxPlan): Promise<{role?: string; epoch?: number | null} | null> {
  try {
    const response = await fetch(`${urlOf(box)}/healthz`, {signal: AbortSignal.timeout(1000)});
    return response.status === 200 ? ((await response.json()) as {role?: string}) : null;
  } catch {
    return null;
  }
}

async function call(box: BoxPlan, key: string, method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(urlOf(box) + path, {
    method,
    headers: {"X-API-Key": key, "Content-Type": "application/json", ...headers},
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000)
  });
  const text = await response.text();
  return {status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null};
}

describe("two boxes: the standby takes over from a killed active", () => {
  it(
    "serves and pages within the recovery time, loses at most the recovery point, and the old active comes back as the standby",
    {timeout: 240_000},
    async () => {
      const base = 20_000 + Math.floor(Math.random() * 20_000);
      const a = await plan("klaxon-a", "127.0.0.2", base);
      const b = await plan("klaxon-b", "127.0.0.3", base + 1);

      const first = launch(a, b, "active");
      await first.serving;
      const key = readFileSync(join(a.dataDir, "initial-admin-key"), "utf8").trim();
      const admin = (await call(a, key, "POST", "/api/v1/recipients", {name: "Site admin", email: "admin@plant.lan"}))
        .body.uuid;
      const operator = (await call(a, key, "POST", "/api/v1/recipients", {name: "Operator", email: "op@plant.lan"}))
        .body.uuid;

      launch(b, a, "standby", {KLAXON_SELF_MONITORING_RECIPIENT: admin});
      await eventually(
        "b stands by with a copy",
        () => health(b),
        (answer) => answer?.role === "standby" && answer.epoch === 1,
        60_000
      );
      const refused = await call(b, key, "POST", "/api/v1/notifications/send", {
        recipient_uuid: operator,
        message: "x",
        priority: "high"
      });
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe("standby");
      expect(refused.headers.get("link")).toBe(`<${urlOf(a)}>; rel="active"`);
      expect(refused.headers.get("retry-after")).toBe("5");

      const sentOne = await call(a, key, "POST", "/api/v1/notifications/send", {
        recipient_uuid: operator,
        message: "Boiler flame out",
        priority: "high"
      });
      expect(sentOne.status, JSON.stringify(sentOne.body)).toBe(202);
      const acknowledged = sentOne.body.notification_uuid;
      expect((await call(a, key, "POST", `/api/v1/notifications/${acknowledged}/ack`, {by: "maria"})).status).toBe(200);

      // The active sees its standby keep up: the lag the standby reports, on the active's /readyz.
      const seen = await eventually(
        "the standby's lag on the active",
        async () => (await call(a, key, "GET", "/readyz")).body.replication.standby,
        (standby) => standby.lag_seconds !== null && standby.silent_seconds < 2,
        30_000
      );
      expect(seen.lag_seconds).toBeLessThan(5);

      const replicating = (await call(a, key, "GET", "/readyz")).body.replication.litestream.pid as number;

      // A steady load of sends, each with its Idempotency-Key, until the active dies.
      const accepted = new Map<string, {id: string; at: number}>();
      const attempted: string[] = [];
      let load = true;
      // Four senders, each sending again as soon as it has its answer.
      const sender = async (who: number) => {
        for (let n = 0; load; n++) {
          const idempotencyKey = `load-${who}-${n}`;
          attempted.push(idempotencyKey);
          try {
            const answer = await call(
              a,
              key,
              "POST",
              "/api/v1/notifications/send",
              {recipient_uuid: operator, message: `Alarm ${who}-${n}`, priority: "high"},
              {"Idempotency-Key": idempotencyKey}
            );
            if (answer.status === 202)
              accepted.set(idempotencyKey, {id: answer.body.notification_uuid, at: Date.now()});
          } catch {
            // the active is gone
          }
        }
      };
      const loadStartedAt = Date.now();
      const sending = Promise.all([0, 1, 2, 3].map(sender));
      await eventually(
        "load under way",
        () => accepted.size,
        (count) => count >= 300,
        60_000
      );
      first.child.kill("SIGKILL");
      const killedAt = Date.now();
      await first.exited;
      load = false;
      await sending;

      const served = await eventually(
        "b serves as the active",
        () => health(b),
        (answer) => answer?.role === "active" && answer.epoch !== null,
        120_000
      );
      const recoverySeconds = (Date.now() - killedAt) / 1000;
      expect(served!.epoch).toBe(2);
      const pages = await eventually(
        "the takeover page",
        async () =>
          (await call(b, key, "GET", `/api/v1/notifications?limit=200`)).body.items as {message: string; id: string}[],
        (items) => items.some((item) => item.message.includes("klaxon-b took over from klaxon-a")),
        30_000
      );
      expect(pages.length).toBeGreaterThan(0);

      // The recovery point: alerts the old active answered 202 that the new one does not have.
      const missing: {key: string; at: number}[] = [];
      for (const [idempotencyKey, {id, at}] of accepted)
        if ((await call(b, key, "GET", `/api/v1/notifications/${id}`)).status === 404)
          missing.push({key: idempotencyKey, at});
      const lostSeconds = missing.length ? (killedAt - Math.min(...missing.map((lost) => lost.at))) / 1000 : 0;
      console.log(
        JSON.stringify({
          recovery_seconds: recoverySeconds,
          accepted: accepted.size,
          missing: missing.length,
          recovery_point_seconds: lostSeconds,
          sends_per_second: Math.round(accepted.size / ((killedAt - loadStartedAt) / 1000))
        })
      );
      expect(lostSeconds).toBeLessThanOrEqual(1);

      // Clients retry everything they sent with the same key: each alert lands exactly once.
      for (const idempotencyKey of attempted) {
        const n = idempotencyKey.slice("load-".length);
        const retry = await call(
          b,
          key,
          "POST",
          "/api/v1/notifications/send",
          {recipient_uuid: operator, message: `Alarm ${n}`, priority: "high"},
          {"Idempotency-Key": idempotencyKey}
        );
        expect(retry.status).toBe(202);
        const before = accepted.get(idempotencyKey);
        if (before && !missing.some((lost) => lost.key === idempotencyKey))
          expect(retry.body.notification_uuid).toBe(before.id);
        const again = await call(
          b,
          key,
          "POST",
          "/api/v1/notifications/send",
          {recipient_uuid: operator, message: `Alarm ${n}`, priority: "high"},
          {"Idempotency-Key": idempotencyKey}
        );
        expect(again.body.notification_uuid).toBe(retry.body.notification_uuid);
      }
      // Running escalations go on from their stored state on the new active.
      const stillRunning = [...accepted.values()][0].id;
      expect((await call(b, key, "GET", `/api/v1/notifications/${stillRunning}`)).body.status).toBe("notifying");
      expect((await call(b, key, "GET", `/api/v1/notifications/${acknowledged}`)).body).toMatchObject({
        status: "acknowledged",
        acknowledged_by: "maria"
      });

      // The old active returns as configured (active), finds the new one and stands by.
      launch(a, b, "active");
      await eventually(
        "a comes back as the standby",
        () => health(a),
        (answer) => answer?.role === "standby",
        60_000
      );
      expect((await health(b))?.role).toBe("active");
      // The Litestream the kill left running was ended by the restart, not left racing the new one.
      expect(alive(replicating)).toBe(false);
      // What it had written as the active is kept aside for a person, not followed over.
      expect(readdirSync(a.dataDir).filter((name) => name.startsWith("former-journal-"))).toHaveLength(1);
    }
  );
});
