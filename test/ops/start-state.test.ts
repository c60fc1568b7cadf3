import {describe, expect, it} from "vitest";
import {existsSync, mkdirSync, readdirSync, readFileSync, statSync} from "node:fs";
import {createServer, type AddressInfo} from "node:net";
import {join} from "node:path";
import {tempDir} from "../support/gateway.js";
import {launchExpectingRefusal, startGatewayProcess} from "../support/gateway-process.js";

describe("what a start leaves in the data dir", () => {
  it("a start whose port is taken names the setting to change and leaves no data dir, journal, config store or admin key behind", async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = String((squatter.address() as AddressInfo).port);
    try {
      const fresh = join(tempDir(), "data");
      const start = await launchExpectingRefusal(fresh, {KLAXON_PORT: port});
      expect(start.code).toBe(1);
      expect(start.output).toMatch(
        new RegExp(
          `^klaxon: cannot start: port ${port} is already in use .*KLAXON_PORT=<port> or .npm start -- --port <port>.`,
          "m"
        )
      );
      expect(existsSync(fresh)).toBe(false);
      // The installer makes the data dir before the first start: it stays, empty. `--port` wins over KLAXON_PORT.
      const prepared = tempDir();
      mkdirSync(prepared, {recursive: true});
      const flagged = await launchExpectingRefusal(prepared, {KLAXON_PORT: "0"}, {args: ["--port", port]});
      expect(flagged.code).toBe(1);
      expect(flagged.output).toMatch(/already in use/);
      expect(readdirSync(prepared)).toEqual([]);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 60_000);

  it("under umask 022 makes the data dir 0700 and the journal, config store, key files and backups 0600; a second start on its port leaves its files alone", async () => {
    const dataDir = join(tempDir(), "data");
    const gateway = await startGatewayProcess(dataDir, {}, 20_000, {umask: "022"});
    try {
      const headers = {
        "X-API-Key": readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim(),
        "Content-Type": "application/json"
      };
      // A change to the config store makes its .bak; the WAL and its index exist while serving.
      expect(
        (
          await fetch(`${gateway.url}/api/v1/recipients`, {
            method: "POST",
            headers,
            body: JSON.stringify({email: "ops@factory.lan"})
          })
        ).status
      ).toBe(201);
      const modes = Object.fromEntries(
        [
          "journal.sqlite",
          "journal.sqlite-wal",
          "journal.sqlite-shm",
          "journal.sqlite-open",
          "config.json",
          "config.json.bak",
          "ack-link.key",
          "initial-admin-key"
        ].map((file) => [file, (statSync(join(dataDir, file)).mode & 0o777).toString(8)])
      );
      expect(modes).toEqual(Object.fromEntries(Object.keys(modes).map((file) => [file, "600"])));
      expect((statSync(dataDir).mode & 0o777).toString(8)).toBe("700");
      // A backup holds every secret the data dir does: SQLite's copy of the journal too (issue 29).
      const backup = await fetch(`${gateway.url}/api/v1/backups`, {method: "POST", headers});
      expect(backup.status).toBe(201);
      const {path, files} = (await backup.json()) as {path: string; files: Array<{name: string}>};
      const backupModes = Object.fromEntries(
        [...files.map((file) => file.name), "manifest.json"].map((file) => [
          file,
          (statSync(join(path, file)).mode & 0o777).toString(8)
        ])
      );
      expect(Object.keys(backupModes)).toContain("journal.sqlite");
      expect(backupModes).toEqual(Object.fromEntries(Object.keys(backupModes).map((file) => [file, "600"])));
      // `npm start` typed twice: the second start is refused on the port before it opens the running
      // gateway's journal, whose open marker it once took over and removed on its way out.
      const before = readdirSync(dataDir).sort();
      const second = await launchExpectingRefusal(dataDir, {KLAXON_PORT: new URL(gateway.url).port});
      expect(second.output).toMatch(/cannot start: port \d+ is already in use/);
      expect(readdirSync(dataDir).sort()).toEqual(before);
      expect(readFileSync(join(dataDir, "journal.sqlite-open"), "utf8").trim()).toBe(String(gateway.child.pid));
    } finally {
      gateway.child.kill("SIGTERM");
      await gateway.exited;
    }
  }, 60_000);
});
