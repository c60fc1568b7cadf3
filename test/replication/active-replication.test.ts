import {afterAll, afterEach, describe, expect, it} from "vitest";
import {execFileSync} from "node:child_process";
import {existsSync, readFileSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {createRecipient, logDrivers, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {freePort} from "../support/mosquitto.js";
import type {ChannelDriver} from "../../src/channels/channel.js";
import {followReplica, requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {eventually} from "../support/eventually.js";
import {readBeacon, ReplicationRepository} from "../../src/store/journal/replication.repository.js";

afterAll(endOrphanedLitestreams);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The active box klaxon-a, shipping to the folder `replica`. */
const asActiveA = (replica: string) => ({
  role: "active" as const,
  box_name: "klaxon-a",
  peer: "http://127.0.0.3:8080",
  replica,
  incoming: tempDir(),
  litestream: requireLitestream()
});

async function activeGateway(replica: string): Promise<TestGateway> {
  const gw = await startTestGateway({replication: asActiveA(replica)});
  cleanup.push(() => gw.stop());
  return gw;
}

function follow(replica: string): string {
  const copy = join(tempDir(), "copy.sqlite");
  const follower = followReplica(replica, copy);
  cleanup.push(() => follower.stop());
  return copy;
}

/** What the standby's copy holds, read as the standby reads it: read-only, beside the follower writing it. */
function inCopy(copy: string, notification: string) {
  if (!existsSync(copy)) return null;
  const db = new Database(copy, {readonly: true});
  try {
    const status = db.prepare("SELECT status FROM notifications WHERE id = ?").pluck().get(notification);
    const config = db.prepare("SELECT body FROM replicated_documents WHERE name = 'config'").pluck().get() as string;
    return {
      stored: status !== undefined,
      status: status as string | undefined,
      recipients: (JSON.parse(config) as {recipients: {uuid: string}[]}).recipients,
      beacon: readBeacon(db)
    };
  } catch {
    return null; // the follower has not restored the first snapshot yet
  } finally {
    db.close();
  }
}

describe("the active box replicates its journal with Litestream", () => {
  it("ships accepted alerts, the configuration and a beacon to a folder replica that a follower restores", async () => {
    const replica = tempDir();
    const gw = await activeGateway(replica);
    const alice = await createRecipient(gw);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: alice, message: "Line 3 stopped", priority: "critical"}
    });
    expect(sent.status).toBe(202);

    const copy = follow(replica);
    const seen = await eventually(
      "the follower's copy",
      () => inCopy(copy, sent.body.notification_uuid),
      (found) => found?.stored === true,
      30_000
    );
    expect(seen!.recipients.map((recipient) => recipient.uuid)).toEqual([alice]);
    expect(seen!.beacon).toMatchObject({box: "klaxon-a", epoch: 1});

    const ready = await gw.call("GET", "/readyz");
    expect(ready.body.replication).toMatchObject({role: "active", box: "klaxon-a", epoch: 1});
    expect(ready.body.replication.litestream).toMatchObject({running: true, restarts: 0});
    // No config.json or key file beside the journal: the journal is the one source of truth.
    expect(existsSync(join(gw.dataDir, "config.json"))).toBe(false);
    expect(readFileSync(join(gw.dataDir, "litestream.yml"), "utf8")).toContain(`path: ${replica}`);
    expect(statSync(join(gw.dataDir, "litestream.yml")).mode & 0o777).toBe(0o600);
  });

  it("says its role and epoch from the first request it answers, the epoch a takeover raised included", async () => {
    const dataDir = tempDir();
    const replica = tempDir();
    // A channel driver starts after the HTTP front opens and before the gateway logs "serving":
    // what /healthz and /readyz answer then is what a client sending at once would see.
    const start = async (port: number) => {
      const seen: {healthz: unknown; readyz: unknown}[] = [];
      const ask = async (path: string) => {
        const key = existsSync(join(dataDir, "initial-admin-key"))
          ? readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim()
          : "";
        return (await fetch(`http://127.0.0.1:${port}${path}`, {headers: {"X-API-Key": key}})).json();
      };
      const probe: ChannelDriver = {
        channel: "email",
        concurrency: 1,
        unavailableReason: () => null,
        deliver: () => Promise.resolve({outcome: "sent", detail: "probe"}),
        start: async () => void seen.push({healthz: await ask("/healthz"), readyz: await ask("/readyz")})
      };
      const gw = await startTestGateway(
        {
          port,
          replication: asActiveA(replica)
        },
        {dataDir, drivers: (logger) => [probe, ...logDrivers(logger).filter((driver) => driver.channel !== "email")]}
      );
      return {gw, seen};
    };
    const first = await start(await freePort());
    expect(first.seen[0].healthz).toMatchObject({role: "active", box: "klaxon-a", epoch: 1});
    // As a takeover does before the gateway starts: a higher epoch in the journal.
    await new ReplicationRepository(first.gw.gateway.journal).putDocument("epoch", "2");
    await first.gw.gateway.stop();
    const second = await start(await freePort());
    cleanup.push(() => second.gw.stop());
    expect(second.seen).toEqual([
      {
        healthz: {status: "ok", role: "active", box: "klaxon-a", epoch: 2},
        readyz: expect.objectContaining({replication: expect.objectContaining({role: "active", epoch: 2})})
      }
    ]);
  });

  it("starts Litestream again when it dies, and the alerts keep reaching the replica", {timeout: 60_000}, async () => {
    const replica = tempDir();
    const gw = await activeGateway(replica);
    const first = (await gw.call("GET", "/readyz")).body.replication.litestream;
    process.kill(first.pid, "SIGKILL");
    const again = await eventually(
      "litestream restarted",
      async () => (await gw.call("GET", "/readyz")).body.replication.litestream,
      (state) => state.running && state.restarts === 1
    );
    expect(again.last_exit).toBe("signal SIGKILL");
    expect(again.pid).not.toBe(first.pid);

    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: await createRecipient(gw), message: "after the restart", priority: "high"}
    });
    const copy = follow(replica);
    await eventually(
      "the alert sent after the restart, in the copy",
      () => inCopy(copy, sent.body.notification_uuid),
      (found) => found?.stored === true,
      30_000
    );
  });

  it("stops Litestream with the gateway, after the journal's last commits", async () => {
    const gw = await activeGateway(tempDir());
    const {pid} = (await gw.call("GET", "/readyz")).body.replication.litestream;
    await gw.gateway.stop();
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });

  it(
    "carries everything a box needs to serve in its place: a journal restored from the replica serves the same alerts, keys and recipients",
    {timeout: 60_000},
    async () => {
      const replica = tempDir();
      const gw = await activeGateway(replica);
      const alice = await createRecipient(gw);
      const send = (message: string) =>
        gw.call("POST", "/api/v1/notifications/send", {body: {recipient_uuid: alice, message, priority: "high"}});
      const open = (await send("Press 2 hydraulic pressure low")).body.notification_uuid;
      const acknowledged = (await send("Boiler flame out")).body.notification_uuid;
      expect((await gw.call("POST", `/api/v1/notifications/${acknowledged}/ack`, {body: {by: "maria"}})).status).toBe(
        200
      );
      const copy = follow(replica);
      await eventually(
        "the copy",
        () => inCopy(copy, acknowledged),
        (found) => found?.stored === true,
        30_000
      );
      await eventually(
        "the acknowledgement in the replica",
        () => inCopy(copy, acknowledged),
        (found) => found?.status === "acknowledged",
        30_000
      );

      // The other box: a data dir holding nothing but the journal restored from the replica.
      const otherDir = tempDir();
      execFileSync(requireLitestream(), ["restore", "-o", join(otherDir, "journal.sqlite"), `file://${replica}`]);
      // Where the test support reads the admin key it calls with; the gateway writes none, since it has keys.
      writeFileSync(join(otherDir, "initial-admin-key"), gw.adminKey);
      const other = await startTestGateway(
        {
          replication: {
            role: "active",
            box_name: "klaxon-b",
            peer: gw.url,
            replica: tempDir(),
            incoming: tempDir(),
            litestream: requireLitestream()
          }
        },
        {dataDir: otherDir}
      );
      // The journal brought the API keys: the first box's admin key is the other's too.
      expect(other.adminKey).toBe(gw.adminKey);
      cleanup.push(() => other.stop());
      // Still open: neither box configures a channel, so it waits (queued) with none in its plan.
      expect((await other.call("GET", `/api/v1/notifications/${open}`)).body.status).toBe("queued");
      expect((await other.call("GET", `/api/v1/notifications/${acknowledged}`)).body).toMatchObject({
        status: "acknowledged",
        acknowledged_by: "maria"
      });
      expect((await other.call("GET", `/api/v1/recipients/${alice}`)).body.name).toBe("Alice");
    }
  );

  it("writes backups of the same shape as a single box's: the configuration comes out of the journal as config.json", async () => {
    const gw = await activeGateway(tempDir());
    const alice = await createRecipient(gw);
    const made = await gw.call("POST", "/api/v1/backups");
    expect(made.status).toBe(201);
    const config = JSON.parse(readFileSync(join(gw.dataDir, "backups", made.body.name, "config.json"), "utf8"));
    expect(config.recipients.map((recipient: {uuid: string}) => recipient.uuid)).toEqual([alice]);
  });

  it("on a single box reports role off and starts no Litestream", async () => {
    const gw = await startTestGateway();
    cleanup.push(() => gw.stop());
    const ready = await gw.call("GET", "/readyz");
    expect(ready.body.replication).toEqual({
      role: "off",
      box: null,
      epoch: null,
      litestream: null,
      beacon_written_at: null,
      standby: null
    });
    expect(existsSync(join(gw.dataDir, "config.json"))).toBe(true);
  });
});
