import {afterAll, afterEach, describe, expect, it} from "vitest";
import {existsSync, readdirSync, readFileSync} from "node:fs";
import {createServer} from "node:http";
import type {AddressInfo} from "node:net";
import {join} from "node:path";
import fc from "fast-check";
import {servesOrOutranks, startBox, type Box} from "../../src/boot/standby.js";
import type {PeerAnswer} from "../../src/ops/replication/peer-watch.js";
import {beaconOfReplica} from "../../src/ops/replication/replica-probe.js";
import {SupervisedProcess} from "../../src/ops/replication/supervised-process.js";
import {eventually} from "../support/eventually.js";
import {openStores} from "../../src/store/open-stores.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Settings} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";
import {launchExpectingRefusal} from "../support/gateway-process.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";

afterAll(endOrphanedLitestreams);

const logger = createLogger("error", () => undefined);
const roleAt = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as {role: string}).role;
let box: Box | null = null;
afterEach(async () => {
  await box?.stop();
  box = null;
});

function settingsFor(dataDir: string): Settings {
  return settingsWith({
    host: "127.0.0.1",
    port: 0,
    data_dir: dataDir,
    replication: {
      role: "standby",
      box_name: "klaxon-b",
      // No active answers here.
      peer: "http://127.0.0.1:9",
      replica: tempDir(),
      incoming: tempDir(),
      litestream: requireLitestream(),
      takeover_after_seconds: 1
    }
  });
}

/** A journal in `dataDir` whose newest beacon `writer` committed, as its own or as a followed copy. */
async function journalWrittenBy(settings: Settings, writer: string, epoch = 1, dataDir = settings.data_dir) {
  const stores = await openStores(
    {...settings, replication: {...settings.replication, role: "active"}},
    {
      journal: join(dataDir, "journal.sqlite"),
      config: join(dataDir, "config.json"),
      ackLinkKey: join(dataDir, "ack-link.key")
    },
    {logger}
  );
  await stores.replication!.writeBeacon({box: writer, epoch, written_at: new Date().toISOString()});
  await stores.journal.close();
}

/** What the peer shipped into this box's incoming folder while it was the active: a journal of `epoch`, through a real Litestream. */
async function shippedByPeer(settings: Settings, writer: string, epoch: number): Promise<void> {
  const peerDir = tempDir();
  await journalWrittenBy(settings, writer, epoch, peerDir);
  const shipping = new SupervisedProcess(
    requireLitestream(),
    ["replicate", join(peerDir, "journal.sqlite"), `file://${settings.replication.incoming}`],
    logger
  );
  shipping.start();
  try {
    await eventually(
      "the peer's journal in the incoming folder",
      () => beaconOfReplica(settings.replication.litestream, settings.replication.incoming, tempDir()),
      (beacon) => beacon?.epoch === epoch,
      30_000
    );
  } finally {
    await shipping.stop();
  }
}

/** A box of two that must not serve at its start: it stands by, then takes over with the epoch after the copy's. */
async function takesOverFrom(epoch: number) {
  expect(box!.gateway()).toBeNull();
  expect(await roleAt(box!.url())).toBe("standby");
  await box!.takenOver;
  const health = (await (await fetch(`${box!.url()}/healthz`)).json()) as {role: string; epoch: number};
  expect(health).toMatchObject({role: "active", epoch: epoch + 1});
}

describe("the role a box of two starts in", () => {
  it("a standby drops the copy an earlier run followed and follows afresh, keeping nothing aside", async () => {
    const settings = settingsFor(tempDir());
    await journalWrittenBy(settings, "klaxon-a");
    box = await startBox(settings, {logger});
    expect(box.gateway()).toBeNull();
    expect(await roleAt(box.url())).toBe("standby");
    expect(readdirSync(settings.data_dir).filter((name) => name.startsWith("former-journal-"))).toEqual([]);
    expect(existsSync(join(settings.data_dir, "journal.sqlite"))).toBe(false);
  });

  it("a box whose own journal it wrote as the active, with no active peer, serves that journal as the active", async () => {
    const settings = settingsFor(tempDir());
    await journalWrittenBy(settings, "klaxon-b");
    box = await startBox(settings, {logger});
    expect(box.gateway()).not.toBeNull();
    expect(await roleAt(box.url())).toBe("active");
  });

  it("a former active whose peer took over and then went down takes over from the peer's newer state, not its own", async () => {
    const settings = settingsFor(tempDir());
    await journalWrittenBy(settings, "klaxon-b", 1);
    await shippedByPeer(settings, "klaxon-a", 2);
    box = await startBox(settings, {logger});
    await takesOverFrom(2);
    // What it had written at epoch 1 is kept aside for a person, not served.
    expect(readdirSync(settings.data_dir).filter((name) => name.startsWith("former-journal-"))).toHaveLength(1);
  });

  it("a box configured as the active whose journal is a copy it followed stands by, then takes over with a raised epoch", async () => {
    const settings = settingsFor(tempDir());
    settings.replication.role = "active";
    await journalWrittenBy(settings, "klaxon-a", 3);
    // The copy is dropped on standing by: the incoming folder holds the same state.
    await shippedByPeer(settings, "klaxon-a", 3);
    box = await startBox(settings, {logger});
    await takesOverFrom(3);
  });
});

describe("a former active whose tail cannot come home", () => {
  it("stands by without serving, keeps its tail and says so on /readyz while the active refuses it", async () => {
    // The new active answers /healthz as the active at a higher epoch, but cannot take a tail yet.
    const peer = createServer((request, response) => {
      if (request.url === "/healthz") {
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify({status: "ok", role: "active", box: "klaxon-a", epoch: 2}));
        return;
      }
      response.statusCode = 503;
      response.end("starting");
    });
    await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
    try {
      const settings = settingsFor(tempDir());
      settings.replication.peer = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
      await journalWrittenBy(settings, "klaxon-b", 1);
      box = await startBox(settings, {logger});
      expect(box.gateway()).toBeNull();
      const ready = await eventually(
        "the waiting tail on /readyz",
        async () => (await fetch(`${box!.url()}/readyz`)).json() as Promise<Record<string, any>>,
        (body) => body.tail?.failures > 0
      );
      expect(ready).toMatchObject({status: "standby", tail: {waiting: 1, last_failure: expect.stringMatching(/503/)}});
      expect(ready.reasons[0]).toMatch(/1 former journal\(s\) of this box hold alerts the active lacks/);
      // It never serves the tail itself: a send is the active's.
      const send = await fetch(`${box.url()}/api/v1/notifications/send`, {method: "POST", body: "{}"});
      expect(send.status).toBe(503);
      expect(readdirSync(settings.data_dir).filter((name) => name.startsWith("former-journal-"))).toHaveLength(1);
    } finally {
      await box?.stop();
      box = null;
      await new Promise((resolve) => peer.close(resolve));
    }
  });
});

describe("a standby started twice on one data dir", () => {
  it(
    "fails the second start on its port, before it touches the copy the first one follows",
    {timeout: 60_000},
    async () => {
      const settings = settingsFor(tempDir());
      settings.replication.takeover_after_seconds = 600;
      await shippedByPeer(settings, "klaxon-a", 1);
      box = await startBox(settings, {logger});
      const epochAt = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as {epoch: number}).epoch;
      await eventually(
        "the first standby's copy",
        () => epochAt(box!.url()),
        (epoch) => epoch === 1,
        30_000
      );
      expect(readFileSync(join(settings.data_dir, "klaxon.pid"), "utf8").trim()).toBe(String(process.pid));

      // The second start as a process of its own, as systemd or a person would run it: a process serves one door.
      const {replica, incoming, litestream} = settings.replication;
      const again = await launchExpectingRefusal(settings.data_dir, {
        KLAXON_PORT: new URL(box.url()).port,
        KLAXON_REPLICATION_ROLE: "standby",
        KLAXON_REPLICATION_BOX_NAME: "klaxon-b",
        KLAXON_REPLICATION_PEER: settings.replication.peer,
        KLAXON_REPLICATION_REPLICA: replica,
        KLAXON_REPLICATION_INCOMING: incoming,
        KLAXON_REPLICATION_LITESTREAM: litestream
      });
      expect(again).toMatchObject({code: 1, served: false});
      expect(again.output).toMatch(/EADDRINUSE/);
      expect(await epochAt(box.url())).toBe(1);
      expect(existsSync(join(settings.data_dir, "journal.sqlite"))).toBe(true);
      await box.stop();
      box = null;
      expect(existsSync(join(settings.data_dir, "klaxon.pid"))).toBe(false);
    }
  );
});

describe("of two boxes standing by, exactly one takes over", () => {
  const standby = (epoch: number | null, box: string): PeerAnswer => ({role: "standby", box, epoch, lag_seconds: null});

  it("waits for a peer that serves, or that stands by with a newer copy or, at the same epoch, the first name", () => {
    expect(servesOrOutranks({role: "active", box: "klaxon-a", epoch: 1, lag_seconds: null}, 5, "klaxon-b")).toBe(true);
    expect(servesOrOutranks(standby(3, "klaxon-a"), 2, "klaxon-b")).toBe(true);
    expect(servesOrOutranks(standby(3, "klaxon-a"), null, "klaxon-b")).toBe(true);
    expect(servesOrOutranks(standby(2, "klaxon-a"), 2, "klaxon-b")).toBe(true);
  });

  it("does not wait for a peer standing by with an older copy, the same epoch and a later name, or nothing", () => {
    expect(servesOrOutranks(standby(1, "klaxon-a"), 2, "klaxon-b")).toBe(false);
    expect(servesOrOutranks(standby(2, "klaxon-c"), 2, "klaxon-b")).toBe(false);
    expect(servesOrOutranks(standby(null, "klaxon-a"), 2, "klaxon-b")).toBe(false);
  });

  it("for any two copies, exactly one of the two boxes waits for the other", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({min: 1, max: 5}), {nil: null}),
        fc.option(fc.integer({min: 1, max: 5}), {nil: null}),
        (epochA, epochB) => {
          fc.pre(epochA !== null || epochB !== null);
          const aWaits = servesOrOutranks(standby(epochB, "klaxon-b"), epochA, "klaxon-a");
          const bWaits = servesOrOutranks(standby(epochA, "klaxon-a"), epochB, "klaxon-b");
          expect(aWaits !== bWaits).toBe(true);
        }
      )
    );
  });
});
