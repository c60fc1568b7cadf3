import {afterEach, describe, expect, it} from "vitest";
import {spawnSync} from "node:child_process";
import {existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {BackupService} from "../../src/ops/backups.js";
import {RestoreError, restoreBackup} from "../../src/ops/restore.js";
import {AuditService} from "../../src/services/shared/audit.service.js";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {AuditRepository} from "../../src/store/journal/audit.repository.js";
import {Journal} from "../../src/store/journal/journal.js";

let gw: TestGateway | null = null;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await gw?.stop();
  gw = null;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T0 = Date.UTC(2026, 10, 23, 2, 30, 0);

async function send(gateway: TestGateway, recipient: string, message: string): Promise<string> {
  const answer = await gateway.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipient, message, priority: "high"}
  });
  expect(answer.status).toBe(202);
  return answer.body.notification_uuid;
}

describe("backups", () => {
  it("backs up online, and a restore with the gateway stopped brings back exactly that state", async () => {
    const clock = new ManualClock(T0);
    gw = await startTestGateway({}, {clock});
    const recipient = (await gw.call("POST", "/api/v1/recipients", {body: {name: "Ops", email: "ops@factory.lan"}}))
      .body.uuid;
    const before = await send(gw, recipient, "before the backup");

    const made = await gw.call("POST", "/api/v1/backups");
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      name: "2026-11-23T02-30-00Z",
      created_at: "2026-11-23T02:30:00.000Z",
      path: join(gw.dataDir, "backups", "2026-11-23T02-30-00Z")
    });
    expect(made.headers.get("location")).toBe("/api/v1/backups/2026-11-23T02-30-00Z");
    // The acknowledge-link key too, so links already mailed keep working after a restore elsewhere.
    expect(made.body.files.map((file: {name: string}) => file.name)).toEqual([
      "ack-link.key",
      "config.json",
      "journal.sqlite"
    ]);
    expect(statSync(join(made.body.path, "ack-link.key")).mode & 0o777).toBe(0o600);
    for (const file of made.body.files) expect(file.bytes).toBe(statSync(join(made.body.path, file.name)).size);
    expect(statSync(made.body.path).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(made.body.path, "journal.sqlite")).subarray(0, 15).toString()).toBe("SQLite format 3");
    expect((await gw.call("GET", "/api/v1/backups")).body.items).toEqual([made.body]);
    expect((await gw.call("GET", `/api/v1/backups/${made.body.name}`)).body).toEqual(made.body);

    // Changes after the backup, which the restore must undo.
    const after = await send(gw, recipient, "after the backup");
    const laterRecipient = (
      await gw.call("POST", "/api/v1/recipients", {body: {name: "Later", email: "later@factory.lan"}})
    ).body.uuid;

    expect(() => restoreBackup(made.body.path, gw!.dataDir)).toThrow(RestoreError);
    expect(() => restoreBackup(made.body.path, gw!.dataDir)).toThrow(
      `a gateway (process ${process.pid}) is running on ${gw.dataDir}`
    );
    expect((await gw.call("GET", `/api/v1/notifications/${after}`)).status).toBe(200);

    await gw.gateway.stop();
    expect(existsSync(join(gw.dataDir, "klaxon.pid"))).toBe(false);
    const result = restoreBackup(made.body.path, gw.dataDir, {clock});
    expect(result.restored).toEqual(["journal.sqlite", "config.json", "ack-link.key"]);
    expect(result.moved_aside).toBe(join(gw.dataDir, "pre-restore-2026-11-23T02-30-00Z"));
    expect(readdirSync(result.moved_aside!)).toEqual(expect.arrayContaining(["journal.sqlite", "config.json"]));
    await gw.restart();

    expect((await gw.call("GET", `/api/v1/notifications/${before}`)).body.message).toBe("before the backup");
    expect((await gw.call("GET", `/api/v1/notifications/${after}`)).status).toBe(404);
    expect((await gw.call("GET", `/api/v1/recipients/${laterRecipient}`)).status).toBe(404);
    expect((await gw.call("GET", `/api/v1/recipients/${recipient}`)).status).toBe(200);
  });

  it("audits every backup with who asked for it and which old ones it deleted", async () => {
    gw = await startTestGateway({backup: {keep: 1}}, {clock: new ManualClock(T0)});
    const first = (await gw.call("POST", "/api/v1/backups")).body;
    const second = (await gw.call("POST", "/api/v1/backups")).body;
    const audit = (await gw.call("GET", "/api/v1/audit?action=backup.created")).body.items;
    const admin = {type: "api_key", id: gw.adminKey.split("_")[1]};
    expect(audit).toMatchObject([
      {
        actor: admin,
        subject: {type: "backup", id: second.name},
        detail: {files: ["ack-link.key", "config.json", "journal.sqlite"], deleted: [first.name]}
      },
      {actor: admin, subject: {type: "backup", id: first.name}, detail: {deleted: []}}
    ]);
    expect(audit[0].detail.bytes).toBeGreaterThan(0);
  });

  it("is for admin keys only, and an unknown backup is a 404 problem", async () => {
    gw = await startTestGateway();
    const sender = (await gw.call("POST", "/api/v1/keys", {body: {name: "plc", scopes: ["notifications:send"]}})).body
      .key;
    expect((await gw.call("POST", "/api/v1/backups", {key: sender})).status).toBe(403);
    expect((await gw.call("GET", "/api/v1/backups", {key: null})).status).toBe(401);
    const missing = await gw.call("GET", "/api/v1/backups/1999-01-01T00-00-00Z");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    expect(existsSync(join(gw.dataDir, "backups"))).toBe(false);
  });
});

/**
 * The backup service in process: a journal and config store in a temp dir, on a manual clock. How
 * backups are named and pruned is its own rule; "backs up online" and "audits every backup" above
 * keep the black-box proof of both through the API.
 */
async function backupService(keep: number): Promise<{service: BackupService; dataDir: string; clock: ManualClock}> {
  const dataDir = tempDir();
  const logger = createLogger("error", () => undefined);
  const clock = new ManualClock(T0);
  const journal = new Journal({path: join(dataDir, "journal.sqlite"), logger, checkpointIntervalMs: 60_000});
  await ConfigStore.open(join(dataDir, "config.json"));
  cleanups.push(
    () => rmSync(dataDir, {recursive: true, force: true}),
    () => journal.close()
  );
  const audit = new AuditService(journal, new AuditRepository(journal), clock);
  return {service: new BackupService({dataDir, journal, clock, logger, keep, audit}), dataDir, clock};
}

describe("backup names and backup.keep", () => {
  it("keeps only the newest backup.keep backups and names two in one second apart", async () => {
    const {service, dataDir, clock} = await backupService(2);
    const names: string[] = [];
    for (const step of [0, 0, 60_000, 60_000]) {
      clock.advance(step);
      names.push((await service.create()).name);
    }
    expect(names).toEqual([
      "2026-11-23T02-30-00Z",
      "2026-11-23T02-30-00Z-2",
      "2026-11-23T02-31-00Z",
      "2026-11-23T02-32-00Z"
    ]);
    expect((await service.list()).map((item) => item.name)).toEqual(["2026-11-23T02-32-00Z", "2026-11-23T02-31-00Z"]);
    expect(readdirSync(join(dataDir, "backups")).sort()).toEqual(["2026-11-23T02-31-00Z", "2026-11-23T02-32-00Z"]);
  });

  it("never names two backups alike, even when one was pruned within its second", async () => {
    const {service} = await backupService(1);
    const names: string[] = [];
    for (let i = 0; i < 3; i++) names.push((await service.create()).name);
    // keep 1: each backup prunes the one before, whose name would otherwise be free again.
    expect(names).toEqual(["2026-11-23T02-30-00Z", "2026-11-23T02-30-00Z-2", "2026-11-23T02-30-00Z-3"]);
    // GET /api/v1/backups/{name} answers from this list: the first is gone (404), the last is there.
    expect((await service.list()).map((item) => item.name)).toEqual([names[2]]);
  });
});

describe("npm run restore", () => {
  it("restores a backup named by its folder under <data_dir>/backups", async () => {
    gw = await startTestGateway();
    const recipient = (await gw.call("POST", "/api/v1/recipients", {body: {name: "Ops", email: "ops@factory.lan"}}))
      .body.uuid;
    const backup = (await gw.call("POST", "/api/v1/backups")).body;
    expect((await gw.call("DELETE", `/api/v1/recipients/${recipient}`)).status).toBe(204);
    const running = spawnSync("npm", ["run", "--silent", "restore", "--", backup.name], {
      cwd: join(import.meta.dirname, "../.."),
      env: {...process.env, KLAXON_DATA_DIR: gw.dataDir},
      encoding: "utf8"
    });
    expect(running.status).toBe(1);
    expect(running.stderr).toContain("restore failed: a gateway");
    await gw.gateway.stop();
    const restored = spawnSync("npm", ["run", "--silent", "restore", "--", backup.name], {
      cwd: join(import.meta.dirname, "../.."),
      env: {...process.env, KLAXON_DATA_DIR: gw.dataDir},
      encoding: "utf8"
    });
    expect(restored.status).toBe(0);
    expect(restored.stdout).toContain(
      `restored journal.sqlite, config.json, ack-link.key from ${backup.path} into ${gw.dataDir}`
    );
    await gw.restart();
    expect((await gw.call("GET", `/api/v1/recipients/${recipient}`)).status).toBe(200);
  });
});

describe("restoreBackup", () => {
  function dataDirWith(files: Record<string, string>): string {
    const dir = tempDir();
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }

  it.each([
    ["a folder without the journal", {"config.json": "{}"}, /is not a Klaxon backup/],
    [
      "a journal that is not SQLite",
      {"journal.sqlite": "hello, not a database at all", "config.json": "{}"},
      /is not an SQLite database/
    ],
    [
      "a config store that does not parse",
      {"journal.sqlite": "SQLite format 3\u0000rest", "config.json": "{broken"},
      /is not valid JSON/
    ]
  ])("refuses %s and changes nothing", (_what, files, message) => {
    const backup = dataDirWith(files);
    const data = dataDirWith({"journal.sqlite": "live journal", "config.json": '{"live": true}'});
    expect(() => restoreBackup(backup, data)).toThrow(message);
    expect(readdirSync(data).sort()).toEqual(["config.json", "journal.sqlite"]);
    expect(readFileSync(join(data, "journal.sqlite"), "utf8")).toBe("live journal");
  });

  it("ignores a pid file left by a process that is gone (a power cut)", () => {
    const backup = dataDirWith({"journal.sqlite": "SQLite format 3\u0000rest", "config.json": "{}"});
    const data = tempDir();
    mkdirSync(data, {recursive: true});
    writeFileSync(join(data, "klaxon.pid"), "2147483646\n");
    expect(restoreBackup(backup, data)).toEqual({moved_aside: null, restored: ["journal.sqlite", "config.json"]});
    expect(readFileSync(join(data, "config.json"), "utf8")).toBe("{}");
  });
});
