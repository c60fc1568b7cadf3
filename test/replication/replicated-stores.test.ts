import {afterEach, describe, expect, it} from "vitest";
import {existsSync, readFileSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {openStores, IMPORTED_SUFFIX, type Stores} from "../../src/store/open-stores.js";
import {settingsWith, loadSettings, SettingsError} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import type {Settings} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";

const logger = createLogger("error", () => undefined);
const opened: Stores[] = [];

const REPLICATION = {peer: "http://127.0.0.3:8080", replica: "/srv/replica", incoming: "/srv/incoming"};
const single = settingsWith({});
const active = settingsWith({replication: {...REPLICATION, role: "active"}});

function filesIn(dir: string) {
  return {
    journal: join(dir, "journal.sqlite"),
    config: join(dir, "config.json"),
    ackLinkKey: join(dir, "ack-link.key")
  };
}

async function open(settings: Settings, dir: string, checkpointIntervalMs?: number): Promise<Stores> {
  const tuned = checkpointIntervalMs
    ? {...settings, journal: {...settings.journal, checkpoint_interval_ms: checkpointIntervalMs}}
    : settings;
  const stores = await openStores(tuned, filesIn(dir), {logger});
  opened.push(stores);
  return stores;
}

async function close(stores: Stores): Promise<void> {
  opened.splice(opened.indexOf(stores), 1);
  await stores.journal.close();
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((stores) => stores.journal.close()));
});

const recipient = (uuid: string) => ({uuid, name: `person ${uuid}`}) as never;

describe("stores when two boxes replicate the journal", () => {
  it("keep the configuration and the ack-link key in the journal only, and find them there again", async () => {
    const dir = tempDir();
    const first = await open(active, dir);
    await first.config.update((draft) => void draft.recipients.push(recipient("r-1")));
    const key = first.ackLinkKey.toString("hex");
    await close(first);
    expect(existsSync(join(dir, "config.json"))).toBe(false);
    expect(existsSync(join(dir, "ack-link.key"))).toBe(false);

    const again = await open(active, dir);
    expect(again.config.data.recipients.map((r) => r.uuid)).toEqual(["r-1"]);
    expect(again.ackLinkKey.toString("hex")).toBe(key);
    expect(again.replication).not.toBeNull();
  });

  it("import a single box's config.json and key file once, and move them aside", async () => {
    const dir = tempDir();
    const before = await open(single, dir);
    await before.config.update((draft) => void draft.recipients.push(recipient("r-old")));
    const key = readFileSync(join(dir, "ack-link.key"), "utf8").trim();
    expect(before.replication).toBeNull();
    await close(before);

    const after = await open(active, dir);
    expect(after.config.data.recipients.map((r) => r.uuid)).toEqual(["r-old"]);
    expect(after.ackLinkKey.toString("hex")).toBe(key);
    expect(existsSync(join(dir, "config.json"))).toBe(false);
    expect(existsSync(join(dir, `config.json${IMPORTED_SUFFIX}`))).toBe(true);
    expect(existsSync(join(dir, `ack-link.key${IMPORTED_SUFFIX}`))).toBe(true);
    await after.config.update((draft) => void draft.recipients.push(recipient("r-new")));
    await close(after);

    // A config.json that reappears is not read over the journal's copy.
    writeFileSync(join(dir, "config.json"), readFileSync(join(dir, `config.json${IMPORTED_SUFFIX}`)));
    const later = await open(active, dir);
    expect(later.config.data.recipients.map((r) => r.uuid)).toEqual(["r-old", "r-new"]);
  });

  it("leave every WAL frame to Litestream: no checkpoint while running or at close", async () => {
    const dir = tempDir();
    const path = filesIn(dir).journal;
    const replicated = await open(active, dir, 5);
    const fileAtOpen = statSync(path).size;
    // Litestream's connection, holding a read transaction as it does, so that nobody's checkpoint passes it.
    const litestream = new Database(path, {readonly: true});
    litestream.exec("BEGIN");
    litestream.prepare("SELECT count(*) FROM probe").get();
    for (let id = 0; id < 200; id++)
      await replicated.journal.write((db) =>
        db.prepare("INSERT INTO probe (id, at) VALUES (?, ?)").run(id, "x".repeat(500))
      );
    expect(statSync(path).size).toBe(fileAtOpen);
    await close(replicated);
    expect(statSync(path).size).toBe(fileAtOpen);
    litestream.exec("COMMIT");
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(200 * 500);
    expect(litestream.prepare("SELECT count(*) FROM probe").pluck().get()).toBe(200);
    litestream.close();

    // On a single box Klaxon's own checkpoints fold the same frames into the file.
    const otherDir = tempDir();
    const own = await open(single, otherDir, 5);
    const ownFileAtOpen = statSync(filesIn(otherDir).journal).size;
    for (let id = 0; id < 200; id++)
      await own.journal.write((db) => db.prepare("INSERT INTO probe (id, at) VALUES (?, ?)").run(id, "x".repeat(500)));
    await close(own);
    expect(statSync(filesIn(otherDir).journal).size).toBeGreaterThan(ownFileAtOpen + 200 * 500);
  });
});

describe("replication settings", () => {
  it("default to one box", () => {
    expect(loadSettings({}).settings.replication.role).toBe("off");
  });

  it("refuse a replicated role without its peer, replica and incoming folder", () => {
    expect(() => loadSettings({KLAXON_REPLICATION_ROLE: "standby"})).toThrow(
      /replication\.peer, replication\.replica, replication\.incoming/
    );
    expect(() => loadSettings({KLAXON_REPLICATION_ROLE: "primary"})).toThrow(SettingsError);
  });

  it("refuse an sftp replica without a key and the peer's host key", () => {
    const env = {
      KLAXON_REPLICATION_ROLE: "active",
      KLAXON_REPLICATION_PEER: "http://127.0.0.3:8080",
      KLAXON_REPLICATION_REPLICA: "sftp://klaxon@127.0.0.3:22/var/lib/klaxon/incoming",
      KLAXON_REPLICATION_INCOMING: "/var/lib/klaxon/incoming"
    };
    expect(() => loadSettings(env)).toThrow(/sftp_key_file and replication\.sftp_host_key/);
    const settings = loadSettings({
      ...env,
      KLAXON_REPLICATION_SFTP_KEY_FILE: "/etc/klaxon/id_ed25519",
      KLAXON_REPLICATION_SFTP_HOST_KEY: "ssh-ed25519 AAAA"
    }).settings;
    expect(settings.replication.role).toBe("active");
  });
});
