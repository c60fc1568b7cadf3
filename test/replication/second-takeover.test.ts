import {afterAll, afterEach, describe, expect, it} from "vitest";
import {readFileSync} from "node:fs";
import {createServer} from "node:net";
import {join} from "node:path";
import {startBox, type Box} from "../../src/boot/standby.js";
import {beaconOfReplica} from "../../src/ops/replication/replica-probe.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Settings} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";
import {eventually} from "../support/eventually.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {startSmtpPeer, type SmtpPeer} from "../support/smtp-peer.js";

afterAll(endOrphanedLitestreams);

const logger = createLogger("error", () => undefined);
const boxes: Box[] = [];
let smtp: SmtpPeer | null = null;
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.stop();
  await smtp?.stop();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const {port} = server.address() as {port: number};
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Pair {
  a: Settings;
  b: Settings;
}

/** Two boxes in one process, each shipping into a folder the other follows, both mailing through one SMTP server. */
async function pair(smtpPort: number): Promise<Pair> {
  const [portA, portB] = [await freePort(), await freePort()];
  const [inA, inB] = [tempDir(), tempDir()];
  const box = (
    name: string,
    port: number,
    peer: number,
    incoming: string,
    replica: string,
    role: "active" | "standby"
  ) =>
    settingsWith({
      host: "127.0.0.1",
      port,
      data_dir: tempDir(),
      smtp: {host: "127.0.0.1", port: smtpPort, from: `${name}@plant.lan`},
      replication: {
        role,
        box_name: name,
        peer: `http://127.0.0.1:${peer}`,
        replica,
        incoming,
        litestream: requireLitestream(),
        takeover_after_seconds: 1
      }
    });
  return {a: box("klaxon-a", portA, portB, inA, inB, "active"), b: box("klaxon-b", portB, portA, inB, inA, "standby")};
}

async function started(settings: Settings): Promise<Box> {
  const box = await startBox(settings, {logger});
  boxes.push(box);
  return box;
}

const epochOf = async (box: Box) =>
  ((await (await fetch(`${box.url()}/healthz`)).json()) as {role: string; epoch: number | null}).epoch;

describe("a second takeover, back to the first box", () => {
  it("pages anew in the new direction while the first takeover's page is still open", async () => {
    smtp = await startSmtpPeer();
    const {a, b} = await pair(smtp.port);
    const first = await started(a);
    const created = await fetch(`${first.url()}/api/v1/recipients`, {
      method: "POST",
      headers: {
        "X-API-Key": readFileSync(join(a.data_dir, "initial-admin-key"), "utf8").trim(),
        "Content-Type": "application/json"
      },
      body: JSON.stringify({name: "Site admin", email: "admin@plant.lan"})
    });
    const admin = ((await created.json()) as {uuid: string}).uuid;
    a.self_monitoring.recipient = b.self_monitoring.recipient = admin;

    const second = await started(b);
    await eventually(
      "b follows a",
      () => epochOf(second),
      (epoch) => epoch === 1,
      30_000
    );
    await first.stop();
    await second.takenOver;
    await eventually(
      "b's takeover page by mail",
      () => smtp!.messages.map((mail) => mail.subject),
      (subjects) => subjects.some((subject) => subject.includes("klaxon-b took over from klaxon-a")),
      30_000
    );
    // b serves (epoch 2) long enough to ship it, leaving its page unacknowledged, then goes down too.
    await eventually(
      "b's epoch shipped into a's incoming folder",
      () => beaconOfReplica(requireLitestream(), a.replication.incoming, tempDir()),
      (beacon) => beacon?.epoch === 2,
      30_000
    );
    await second.stop();

    // a comes back alone: the newer state b shipped wins over a's own, and a takes over from it.
    const back = await started(a);
    await back.takenOver;
    expect(await epochOf(back)).toBe(3);
    await eventually(
      "a's takeover page by mail",
      () => smtp!.messages.map((mail) => mail.subject),
      (subjects) => subjects.some((subject) => subject.includes("klaxon-a took over from klaxon-b")),
      30_000
    );
  }, 120_000);
});
