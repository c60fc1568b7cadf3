import {afterAll, afterEach, describe, expect, it} from "vitest";
import {existsSync, readdirSync} from "node:fs";
import {join} from "node:path";
import {startBox, type Box} from "../../src/standby.js";
import {openStores} from "../../src/store/open-stores.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Settings} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";
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
      litestream: requireLitestream()
    }
  });
}

/** A journal in `dataDir` whose newest beacon `writer` committed, as its own or as a followed copy. */
async function journalWrittenBy(settings: Settings, writer: string): Promise<void> {
  const dataDir = settings.data_dir;
  const stores = await openStores(
    {...settings, replication: {...settings.replication, role: "active"}},
    {
      journal: join(dataDir, "journal.sqlite"),
      config: join(dataDir, "config.json"),
      ackLinkKey: join(dataDir, "ack-link.key")
    },
    {logger}
  );
  await stores.replication!.writeBeacon({box: writer, epoch: 1, written_at: new Date().toISOString()});
  await stores.journal.close();
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
});
