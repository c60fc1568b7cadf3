import {describe, expect, it} from "vitest";
import {copyFileSync, cpSync, readFileSync, rmSync, truncateSync} from "node:fs";
import {join} from "node:path";
import {Journal} from "../../src/store/journal/journal.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";
import {damageTablePage} from "../support/journal-damage.js";
import {launchExpectingRefusal, startGatewayProcess, type GatewayProcess} from "../support/gateway-process.js";

const JOURNAL = "journal.sqlite";
const CONFIG = "config.json";

/** One data dir lived through: a clean stop, kills, restarts. The states the refusals start from are copied out of it. */
const states = {clean: "", killed: "", older: ""};
const dataDir = tempDir();
let headers: Record<string, string> = {};
let recipient = "";

async function sendAlerts(gateway: GatewayProcess, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const sent = await fetch(`${gateway.url}/api/v1/notifications/send`, {
      method: "POST",
      headers,
      body: JSON.stringify({recipient_uuid: recipient, message: `boiler ${index} pressure high`, priority: "high"})
    });
    expect(sent.status).toBe(202);
    ids.push(((await sent.json()) as {notification_uuid: string}).notification_uuid);
  }
  return ids;
}

async function stop(gateway: GatewayProcess, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  gateway.child.kill(signal);
  const code = await gateway.exited;
  if (signal === "SIGTERM") expect(code).toBe(0);
}

/** A copy of a saved state's data dir, changed by `change`. */
function copyOf(state: string, change: (dir: string) => void): string {
  const dir = tempDir();
  cpSync(state, dir, {recursive: true});
  change(dir);
  return dir;
}

/** Refused with exit 78, in words naming the journal, the config store and the flag. */
async function expectRefused(dir: string, finding: string): Promise<void> {
  const start = await launchExpectingRefusal(dir);
  expect(start.served).toBe(false);
  expect(start.code).toBe(78);
  expect(start.output).toMatch(/^klaxon: cannot start: journal refused: /m);
  expect(start.output).toContain(`${join(dir, JOURNAL)} ${finding}`);
  expect(start.output).toContain(`the config store ${join(dir, CONFIG)} last saw journal `);
  expect(start.output).toContain("start once with --accept-journal-loss");
}

describe("the journal knows itself", () => {
  it("a gateway killed with SIGKILL restarts with every alert it accepted, twice over", async () => {
    const first = await startGatewayProcess(dataDir);
    headers = {
      "X-API-Key": readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim(),
      "Content-Type": "application/json"
    };
    const created = await fetch(`${first.url}/api/v1/recipients`, {
      method: "POST",
      headers,
      body: JSON.stringify({email: "ops@factory.lan"})
    });
    recipient = ((await created.json()) as {uuid: string}).uuid;
    const accepted = await sendAlerts(first, 5);
    await stop(first, "SIGTERM");
    states.older = join(tempDir(), JOURNAL);
    copyFileSync(join(dataDir, JOURNAL), states.older);

    const second = await startGatewayProcess(dataDir);
    accepted.push(...(await sendAlerts(second, 5)));
    await stop(second, "SIGKILL");
    const third = await startGatewayProcess(dataDir);
    for (const id of accepted)
      expect((await fetch(`${third.url}/api/v1/notifications/${id}`, {headers})).status).toBe(200);
    accepted.push(...(await sendAlerts(third, 5)));
    await stop(third, "SIGKILL");
    states.killed = copyOf(dataDir, () => undefined);

    const fourth = await startGatewayProcess(dataDir);
    for (const id of accepted)
      expect((await fetch(`${fourth.url}/api/v1/notifications/${id}`, {headers})).status).toBe(200);
    await stop(fourth, "SIGTERM");
    states.clean = dataDir;
    expect(JSON.parse(readFileSync(join(dataDir, CONFIG), "utf8")).journal).toMatchObject({open: false});
  }, 90_000);

  it("refuses a deleted journal", async () => {
    await expectRefused(
      copyOf(states.clean, (dir) => rmSync(join(dir, JOURNAL))),
      "is missing"
    );
  });

  it("refuses a journal truncated to 0 bytes", async () => {
    await expectRefused(
      copyOf(states.clean, (dir) => truncateSync(join(dir, JOURNAL), 0)),
      "is empty (0 bytes)"
    );
  });

  it("refuses a journal whose WAL, index and open marker were removed together after a kill (rm journal.sqlite-*)", async () => {
    const dir = copyOf(states.killed, (copy) => {
      for (const suffix of ["-wal", "-shm", "-open"]) rmSync(join(copy, JOURNAL + suffix));
    });
    await expectRefused(dir, `was not closed cleanly and ${join(dir, JOURNAL)}-wal is missing`);
  });

  it("refuses a journal from another data dir", async () => {
    // Made by the same Klaxon, closed cleanly: a journal of its own, just not this data dir's.
    const foreign = join(tempDir(), JOURNAL);
    await new Journal({path: foreign, logger: createLogger("error", () => {})}).close();
    await expectRefused(
      copyOf(states.clean, (dir) => copyFileSync(foreign, join(dir, JOURNAL))),
      "is not the journal this config store was last used with"
    );
  });

  it("refuses an older copy of its own journal", async () => {
    await expectRefused(
      copyOf(states.clean, (dir) => copyFileSync(states.older, join(dir, JOURNAL))),
      "is older than the one this config store last saw"
    );
  });

  it("serves from a lost journal with --accept-journal-loss, says what it accepted, and adopts the new one", async () => {
    const dir = copyOf(states.clean, (copy) => rmSync(join(copy, JOURNAL)));
    const gateway = await startGatewayProcess(dir, {}, 20_000, {args: ["--accept-journal-loss"]});
    const said = gateway.lines
      .map((line) => JSON.parse(line) as {level: string; msg: string; accepted?: string[]; adopted?: {id: string}})
      .find((entry) => entry.msg.includes("adopting it"));
    expect(said).toMatchObject({level: "error", accepted: [`${join(dir, JOURNAL)} is missing`]});
    await stop(gateway, "SIGTERM");
    expect(JSON.parse(readFileSync(join(dir, CONFIG), "utf8")).journal).toEqual({
      id: said?.adopted?.id,
      commits: expect.any(Number),
      open: false
    });
  });
});

describe("damage found while serving", () => {
  it("makes the gateway unready with one reason that stays", async () => {
    const dir = tempDir();
    const gateway = await startGatewayProcess(dir);
    try {
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
      const path = join(dir, JOURNAL);
      damageTablePage(path, "notifications");

      const keyed = {
        "X-API-Key": readFileSync(join(dir, "initial-admin-key"), "utf8").trim(),
        "Content-Type": "application/json"
      };
      const created = await fetch(`${gateway.url}/api/v1/recipients`, {
        method: "POST",
        headers: keyed,
        body: JSON.stringify({email: "ops@factory.lan"})
      });
      const uuid = ((await created.json()) as {uuid: string}).uuid;
      const sent = await fetch(`${gateway.url}/api/v1/notifications/send`, {
        method: "POST",
        headers: keyed,
        body: JSON.stringify({recipient_uuid: uuid, message: "boiler 3 pressure high", priority: "high"})
      });
      expect(sent.status).toBe(503);
      // Without a key, the public reasons; with one, the journal's own words: each the same in every answer.
      const answers = new Set<string>();
      for (let poll = 0; poll < 8; poll++) {
        const [open, detailed] = await Promise.all([
          fetch(`${gateway.url}/readyz`),
          fetch(`${gateway.url}/readyz`, {headers: {"X-API-Key": keyed["X-API-Key"]}})
        ]);
        expect([open.status, detailed.status]).toEqual([503, 503]);
        const {reasons} = (await open.json()) as {reasons: string[]};
        const {journal} = (await detailed.json()) as {journal: {error: string; damaged: boolean}};
        answers.add(JSON.stringify({reasons, journal}));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(answers.size).toBe(1);
      const {reasons, journal} = JSON.parse([...answers][0]) as {reasons: string[]; journal: {error: string}};
      expect(reasons).toEqual(["the journal is damaged: stop the gateway and restore a backup"]);
      expect(journal).toMatchObject({damaged: true});
      expect(journal.error).toMatch(new RegExp(`^journal ${path} is damaged \\(.*malformed`));
    } finally {
      await stop(gateway, "SIGKILL");
    }
  }, 60_000);
});
