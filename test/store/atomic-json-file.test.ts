import {describe, expect, it} from "vitest";
import {spawn} from "node:child_process";
import {existsSync, readFileSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {AtomicJsonFile, CorruptConfigError} from "../../src/store/config/atomic-json-file.js";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {tempDir} from "../support/gateway.js";

const CHILD = join(import.meta.dirname, "../support/config-writer.child.ts");

/** Runs the writer child until it has acknowledged `atLeast` writes, plus a random extra moment, then SIGKILLs it. */
function crashWriter(path: string, atLeast: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", CHILD, path], {
      stdio: ["ignore", "pipe", "inherit"]
    });
    let acknowledged = 0;
    let killing = false;
    child.stdout.on("data", (chunk: Buffer) => {
      const lines = chunk.toString().trim().split("\n");
      acknowledged = Number(lines[lines.length - 1]);
      if (acknowledged >= atLeast && !killing) {
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 15));
      }
    });
    child.on("exit", () => resolve(acknowledged));
    child.on("error", reject);
  });
}

describe("atomic JSON config file", () => {
  it("writes, keeps the previous version as .bak and reads back", async () => {
    const path = join(tempDir(), "config.json");
    const file = new AtomicJsonFile<{n: number}>(path);
    await file.write({n: 1});
    await file.write({n: 2});
    expect(await file.read()).toEqual({n: 2});
    expect(JSON.parse(readFileSync(`${path}.bak`, "utf8"))).toEqual({n: 1});
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("serialises overlapping writes; the last one wins", async () => {
    const path = join(tempDir(), "config.json");
    const file = new AtomicJsonFile<{n: number}>(path);
    await Promise.all(Array.from({length: 20}, (_, n) => file.write({n})));
    expect(await file.read()).toEqual({n: 19});
  });

  it("ignores and removes a temp file left by a crash before its rename", async () => {
    const path = join(tempDir(), "config.json");
    const file = new AtomicJsonFile<{n: number}>(path);
    await file.write({n: 1});
    writeFileSync(`${path}.tmp`, '{"n": 2, "half');
    expect(await file.read()).toEqual({n: 1});
    expect(existsSync(`${path}.tmp`)).toBe(false);
  });

  it("refuses a corrupt file with an error naming it and its last good copy, never starting empty", async () => {
    const path = join(tempDir(), "config.json");
    const file = new AtomicJsonFile<{n: number}>(path);
    await file.write({n: 1});
    await file.write({n: 2});
    writeFileSync(path, '{"recipients": [');
    await expect(file.read()).rejects.toBeInstanceOf(CorruptConfigError);
    await expect(file.read()).rejects.toThrow(`config store ${path} is not valid JSON`);
    await expect(file.read()).rejects.toThrow(`the last good copy is ${path}.bak`);
    await expect(ConfigStore.open(path)).rejects.toBeInstanceOf(CorruptConfigError);
    expect(readFileSync(path, "utf8")).toBe('{"recipients": [');
  });

  it("says so when a corrupt file has no backup", async () => {
    const path = join(tempDir(), "config.json");
    writeFileSync(path, "not json");
    await expect(new AtomicJsonFile(path).read()).rejects.toThrow("no backup copy exists");
  });

  it("always leaves a whole file when the writer is killed at a random moment", async () => {
    const path = join(tempDir(), "config.json");
    let lastAcknowledged = 0;
    for (let round = 0; round < 6; round++) {
      const acknowledged = await crashWriter(path, 5);
      const data = await new AtomicJsonFile<{seq: number; padding: string}>(path).read();
      expect(data).not.toBeNull();
      expect(data!.padding).toHaveLength(20_000);
      // Every acknowledged write is durable: what is on disk is that write or one after it.
      expect(data!.seq).toBeGreaterThanOrEqual(acknowledged);
      expect(data!.seq).toBeLessThanOrEqual(acknowledged + 1);
      lastAcknowledged = acknowledged;
    }
    expect(lastAcknowledged).toBeGreaterThanOrEqual(5);
  });
});
