import {beforeAll, describe, expect, it} from "vitest";
import {cpSync, readFileSync, rmSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {tempDir} from "../support/gateway.js";
import {launchExpectingRefusal, startGatewayProcess} from "../support/gateway-process.js";

/** A data dir a gateway has run on: an admin key, a recipient, and so a `config.json.bak`. */
let used: string;

beforeAll(async () => {
  used = tempDir();
  const gateway = await startGatewayProcess(used);
  const key = readFileSync(join(used, "initial-admin-key"), "utf8").trim();
  const created = await fetch(`${gateway.url}/api/v1/recipients`, {
    method: "POST",
    headers: {"X-API-Key": key, "Content-Type": "application/json"},
    body: JSON.stringify({email: "ops@factory.lan"})
  });
  expect(created.status).toBe(201);
  gateway.child.kill("SIGTERM");
  expect(await gateway.exited).toBe(0);
}, 60_000);

/** A copy of the used data dir with its config store damaged by `damage`. */
function damagedCopy(damage: (configPath: string) => void): {
  dataDir: string;
  config: string;
  backup: string;
  backupBefore: string;
  adminKeyBefore: number;
} {
  const dataDir = tempDir();
  cpSync(used, dataDir, {recursive: true});
  const config = join(dataDir, "config.json");
  damage(config);
  return {
    dataDir,
    config,
    backup: `${config}.bak`,
    backupBefore: readFileSync(`${config}.bak`, "utf8"),
    adminKeyBefore: statSync(join(dataDir, "initial-admin-key")).mtimeMs
  };
}

describe("a config store of the wrong shape", () => {
  it.each([
    ["{}", "has version (none), not 1"],
    ["[]", "holds a list, not a Klaxon config store (a JSON object)"],
    ["null", "holds null, not a Klaxon config store (a JSON object)"]
  ])("%s stops the start naming the file and its backup, which it leaves as it was", async (text, reason) => {
    const copy = damagedCopy((config) => writeFileSync(config, text));
    const start = await launchExpectingRefusal(copy.dataDir);
    expect(start.served).toBe(false);
    expect(start.code).toBe(78);
    expect(start.output).toContain(`config store ${copy.config} ${reason}; the last good copy is ${copy.backup}`);
    expect(start.output).toMatch(/^klaxon: cannot start: config store /m);
    expect(readFileSync(copy.backup, "utf8")).toBe(copy.backupBefore);
    expect(readFileSync(copy.config, "utf8")).toBe(text);
    expect(statSync(join(copy.dataDir, "initial-admin-key")).mtimeMs).toBe(copy.adminKeyBefore);
  });

  it("with api_keys as text stops the start instead of failing every keyed request", async () => {
    const copy = damagedCopy((config) =>
      writeFileSync(config, JSON.stringify({...JSON.parse(readFileSync(config, "utf8")), api_keys: "klx_all"}))
    );
    const start = await launchExpectingRefusal(copy.dataDir);
    expect(start.served).toBe(false);
    expect(start.code).toBe(78);
    expect(start.output).toContain(
      `config store ${copy.config} has "api_keys" as a string, not a list; the last good copy is ${copy.backup}`
    );
  });

  it("deleted beside a journal stops the start instead of making an empty store and a new admin key", async () => {
    const copy = damagedCopy((config) => rmSync(config));
    const start = await launchExpectingRefusal(copy.dataDir);
    expect(start.served).toBe(false);
    expect(start.code).toBe(78);
    expect(start.output).toContain(
      `config store ${copy.config} is missing, yet ${copy.backup} and ${join(copy.dataDir, "journal.sqlite")} exist`
    );
    expect(readFileSync(copy.backup, "utf8")).toBe(copy.backupBefore);
    expect(statSync(join(copy.dataDir, "initial-admin-key")).mtimeMs).toBe(copy.adminKeyBefore);
  });
});

describe("ConfigStore.open", () => {
  it("reads a file written before heartbeats and integrations existed without rewriting it", async () => {
    const path = join(tempDir(), "config.json");
    const text = JSON.stringify({version: 1, recipients: [], groups: [], api_keys: [], webhooks: []});
    writeFileSync(path, text);
    const store = await ConfigStore.open(path);
    expect(store.data.heartbeats).toEqual([]);
    expect(store.data.escalation_policies).toEqual([]);
    expect(store.data.dashboard).toEqual({password_hash: null, password_set_at: null});
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("refuses a list item without its key field, naming it", async () => {
    const path = join(tempDir(), "config.json");
    writeFileSync(
      path,
      JSON.stringify({version: 1, recipients: [{name: "no uuid"}], groups: [], api_keys: [], webhooks: []})
    );
    await expect(ConfigStore.open(path)).rejects.toThrow(
      `config store ${path} has "recipients[0]" without a "uuid" text field; no backup copy exists`
    );
  });
});
