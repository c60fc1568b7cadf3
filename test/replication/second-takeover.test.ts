import {afterAll, afterEach, describe, expect, it} from "vitest";
import {mkdirSync, readFileSync} from "node:fs";
import {join} from "node:path";
import {startBox, type Box} from "../../src/boot/standby.js";
import {beaconOfReplica} from "../../src/ops/replication/replica-probe.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Settings} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";
import {freePort} from "../support/mosquitto.js";
import {eventually} from "../support/eventually.js";
import {launchGatewayProcess, type LaunchedGateway} from "../support/gateway-process.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {startSmtpPeer, type SmtpPeer} from "../support/smtp-peer.js";

afterAll(endOrphanedLitestreams);

// Box a runs in this process, box b as a process of its own: a process serves one Ts.ED door at a
// time (its injector is one per process), so two boxes serving at once need two processes.
const logger = createLogger("error", () => undefined);
const boxes: Box[] = [];
let b: LaunchedGateway | null = null;
let smtp: SmtpPeer | null = null;
afterEach(async () => {
  b?.child.kill("SIGTERM");
  await b?.exited;
  b = null;
  for (const box of boxes.splice(0)) await box.stop();
  await smtp?.stop();
});

interface Pair {
  a: Settings;
  /** Box b's environment, the settings of a box started as `npm start`. */
  b: Record<string, string>;
  urlB: string;
}

/** Two boxes, each shipping into a folder the other follows, both mailing through one SMTP server. */
async function pair(smtpPort: number): Promise<Pair> {
  const [portA, portB] = [await freePort(), await freePort()];
  const [inA, inB] = [tempDir(), tempDir()];
  const a = settingsWith({
    host: "127.0.0.1",
    port: portA,
    data_dir: tempDir(),
    smtp: {host: "127.0.0.1", port: smtpPort, from: "klaxon-a@plant.lan"},
    replication: {
      role: "active",
      box_name: "klaxon-a",
      peer: `http://127.0.0.1:${portB}`,
      replica: inB,
      incoming: inA,
      litestream: requireLitestream(),
      takeover_after_seconds: 1
    }
  });
  const b = {
    KLAXON_PORT: String(portB),
    KLAXON_SMTP_HOST: "127.0.0.1",
    KLAXON_SMTP_PORT: String(smtpPort),
    KLAXON_SMTP_FROM: "klaxon-b@plant.lan",
    KLAXON_REPLICATION_ROLE: "standby",
    KLAXON_REPLICATION_BOX_NAME: "klaxon-b",
    KLAXON_REPLICATION_PEER: `http://127.0.0.1:${portA}`,
    KLAXON_REPLICATION_REPLICA: inA,
    KLAXON_REPLICATION_INCOMING: inB,
    KLAXON_REPLICATION_LITESTREAM: requireLitestream(),
    KLAXON_REPLICATION_TAKEOVER_AFTER_SECONDS: "1"
  };
  return {a, b, urlB: `http://127.0.0.1:${portB}`};
}

async function started(settings: Settings): Promise<Box> {
  const box = await startBox(settings, {logger});
  boxes.push(box);
  return box;
}

const epochAt = async (url: string) =>
  ((await (await fetch(`${url}/healthz`)).json()) as {role: string; epoch: number | null}).epoch;

describe("a second takeover, back to the first box", () => {
  it("pages anew in the new direction while the first takeover's page is still open", async () => {
    smtp = await startSmtpPeer();
    const pairing = await pair(smtp.port);
    const {a} = pairing;
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
    a.self_monitoring.recipient = admin;

    const dataDirB = join(tempDir(), "data");
    mkdirSync(dataDirB);
    // b logs "gateway serving" only once it has taken over.
    b = launchGatewayProcess(dataDirB, {...pairing.b, KLAXON_SELF_MONITORING_RECIPIENT: admin}, 90_000);
    await eventually(
      "b follows a",
      () => epochAt(pairing.urlB).catch(() => null),
      (epoch) => epoch === 1,
      45_000
    );
    await first.stop();
    await b.serving;
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
    b.child.kill("SIGTERM");
    await b.exited;
    b = null;

    // a comes back alone: the newer state b shipped wins over a's own, and a takes over from it.
    const back = await started(a);
    await back.takenOver;
    expect(await epochAt(back.url())).toBe(3);
    await eventually(
      "a's takeover page by mail",
      () => smtp!.messages.map((mail) => mail.subject),
      (subjects) => subjects.some((subject) => subject.includes("klaxon-a took over from klaxon-b")),
      30_000
    );
  }, 150_000);
});
