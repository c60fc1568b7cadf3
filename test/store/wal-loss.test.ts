import {describe, expect, it} from "vitest";
import {copyFileSync, existsSync, readFileSync, rmSync} from "node:fs";
import {join} from "node:path";
import {Journal} from "../../src/store/journal/journal.js";
import {WalLossError} from "../../src/store/journal/wal-guard.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";
import {launchExpectingRefusal, startGatewayProcess} from "../support/gateway-process.js";

// No checkpoint while the test runs: every accepted alert stays in the WAL, as it would between two.
const NO_CHECKPOINTS = {KLAXON_JOURNAL_CHECKPOINT_INTERVAL_MS: "3600000"};

describe("a journal whose WAL is lost at an unclean stop", () => {
  it("refuses to serve after kill -9 and a deleted WAL, and serves from what remains with --accept-wal-loss, saying so", async () => {
    const dataDir = tempDir();
    const journal = join(dataDir, "journal.sqlite");
    const first = await startGatewayProcess(dataDir, NO_CHECKPOINTS);
    const headers = {
      "X-API-Key": readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim(),
      "Content-Type": "application/json"
    };
    const recipient = (await (
      await fetch(`${first.url}/api/v1/recipients`, {
        method: "POST",
        headers,
        body: JSON.stringify({email: "ops@factory.lan"})
      })
    ).json()) as {uuid: string};
    const accepted: string[] = [];
    for (let index = 0; index < 20; index++) {
      const sent = await fetch(`${first.url}/api/v1/notifications/send`, {
        method: "POST",
        headers,
        body: JSON.stringify({recipient_uuid: recipient.uuid, message: `alert ${index}`, priority: "high"})
      });
      expect(sent.status).toBe(202);
      accepted.push(((await sent.json()) as {notification_uuid: string}).notification_uuid);
    }
    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(`${journal}-open`)).toBe(true);
    rmSync(`${journal}-wal`);

    const refused = await launchExpectingRefusal(dataDir, NO_CHECKPOINTS);
    expect(refused.served).toBe(false);
    expect(refused.code).toBe(78);
    expect(refused.output).toMatch(
      new RegExp(
        `^klaxon: cannot start: journal ${journal} was not closed cleanly \\(process ${first.child.pid} had it open since .*\\) and ${journal}-wal is missing`,
        "m"
      )
    );
    expect(refused.output).toContain("start once with --accept-wal-loss");
    // The refusal changed nothing: the next attempt still sees the same evidence.
    expect(existsSync(`${journal}-open`)).toBe(true);
    expect(existsSync(`${journal}-wal`)).toBe(false);

    const accepting = await startGatewayProcess(dataDir, NO_CHECKPOINTS, 20_000, {args: ["--accept-wal-loss"]});
    try {
      const said = accepting.lines
        .map((line) => JSON.parse(line) as {level: string; msg: string; missing?: string[]})
        .find((entry) => entry.msg.includes("serving from what remains"));
      expect(said).toMatchObject({level: "error", missing: [`${journal}-wal`]});
      // What the flag accepted is real: the alerts lived only in the deleted WAL.
      expect((await fetch(`${accepting.url}/api/v1/notifications/${accepted[0]}`, {headers})).status).toBe(404);
      expect((await fetch(`${accepting.url}/readyz`)).status).toBe(200);
    } finally {
      accepting.child.kill("SIGTERM");
      expect(await accepting.exited).toBe(0);
    }
    // A clean stop takes the marker and the WAL away together; the next start needs no flag.
    expect(existsSync(`${journal}-open`)).toBe(false);
    expect(existsSync(`${journal}-wal`)).toBe(false);
  }, 90_000);
});

describe("WalGuard through Journal", () => {
  const logger = createLogger("error", () => {});

  it("keeps an unclean stop's WAL working, and refuses the same journal without it", async () => {
    const live = join(tempDir(), "journal.sqlite");
    const journal = new Journal({path: live, logger, checkpointIntervalMs: 3600_000});
    await journal.probe("2026-11-25T12:00:00Z");
    // A copy taken while it is open is what a kill -9 leaves behind.
    const withWal = join(tempDir(), "journal.sqlite");
    const withoutWal = join(tempDir(), "journal.sqlite");
    for (const suffix of ["", "-wal", "-open"]) copyFileSync(live + suffix, withWal + suffix);
    for (const suffix of ["", "-open"]) copyFileSync(live + suffix, withoutWal + suffix);
    await journal.close();

    const reopened = new Journal({path: withWal, logger});
    expect(reopened.read((db) => db.prepare("SELECT at FROM probe WHERE id = 1").pluck().get())).toBe(
      "2026-11-25T12:00:00Z"
    );
    await reopened.close();
    expect(() => new Journal({path: withoutWal, logger})).toThrow(WalLossError);
    const accepted = new Journal({path: withoutWal, logger, acceptWalLoss: true});
    expect(accepted.read((db) => db.prepare("SELECT at FROM probe WHERE id = 1").pluck().get())).toBeUndefined();
    await accepted.close();
    expect(existsSync(`${withoutWal}-open`)).toBe(false);
  });
});
