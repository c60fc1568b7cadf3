import {existsSync, mkdirSync, rmSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {ensureKlaxonAdmin, runKlaxonAdmin} from "./support/klaxon-admin.js";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  await ensureKlaxonAdmin();
  gw = await startTestGateway();
  alice = await createRecipient(gw);
}, 120_000);
afterAll(() => gw.stop());

const klaxonAdmin = (...args: string[]) => runKlaxonAdmin(args, {KLAXON_URL: gw.url, KLAXON_API_KEY: gw.adminKey});

async function send(message: string): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: alice, message, priority: "high"}
  });
  return answer.body.notification_uuid;
}

describe("backup and restore", () => {
  it("backs up on the gateway, refuses to restore under a running gateway, and restores once it is stopped", async () => {
    const before = await send("before the backup");
    const made = await klaxonAdmin("backup");
    expect(made.code, made.stderr).toBe(0);
    const name = /^backup\s+(\S+)$/m.exec(made.stdout)![1];
    const path = /^path\s+(\S+)$/m.exec(made.stdout)![1];
    expect(made.stdout).toMatch(/^journal\.sqlite\s+\d+$/m);
    expect(made.stdout).toMatch(/^config\.json\s+\d+$/m);
    expect(statSync(join(path, "journal.sqlite")).size).toBeGreaterThan(0);
    const after = await send("after the backup");

    const refused = await runKlaxonAdmin(["restore", name, "--data-dir", gw.dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is running");

    await gw.gateway.stop();
    const restored = await runKlaxonAdmin(["restore", name, "--data-dir", gw.dataDir, "--json"]);
    expect(restored.code, restored.stderr).toBe(0);
    const result = JSON.parse(restored.stdout);
    expect(result).toMatchObject({
      backup: path,
      data_dir: gw.dataDir,
      restored: ["journal.sqlite", "config.json", "ack-link.key"]
    });
    expect(existsSync(join(result.moved_aside, "journal.sqlite"))).toBe(true);

    await gw.restart();
    expect((await gw.call("GET", `/api/v1/notifications/${before}`)).status).toBe(200);
    expect((await gw.call("GET", `/api/v1/notifications/${after}`)).status).toBe(404);
  });

  it("prints the API's JSON for a backup", async () => {
    const run = await klaxonAdmin("backup", "--json");
    expect(run.code, run.stderr).toBe(0);
    const backup = JSON.parse(run.stdout);
    expect(backup).toMatchObject({
      name: expect.any(String),
      created_at: expect.any(String),
      path: expect.stringContaining(gw.dataDir)
    });
    expect(backup.files.map((file: {name: string}) => file.name).sort()).toEqual([
      "ack-link.key",
      "config.json",
      "journal.sqlite"
    ]);
  });

  it("refuses a folder that is not a backup, changing nothing, and needs an admin key to back up", async () => {
    const notABackup = tempDir("klaxon-not-a-backup-");
    mkdirSync(join(notABackup, "x"));
    writeFileSync(join(notABackup, "config.json"), "{}");
    const empty = tempDir("klaxon-empty-data-");
    const run = await runKlaxonAdmin(["restore", notABackup, "--data-dir", empty]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("is not a Klaxon backup");
    expect(existsSync(join(empty, "config.json"))).toBe(false);
    for (const dir of [notABackup, empty]) rmSync(dir, {recursive: true, force: true});

    const created = await gw.call("POST", "/api/v1/keys", {body: {name: "sender", scopes: ["notifications:send"]}});
    const forbidden = await runKlaxonAdmin(["backup"], {KLAXON_URL: gw.url, KLAXON_API_KEY: created.body.key});
    expect(forbidden.code).toBe(4);
  });
});
