import {describe, expect, it} from "vitest";
import {spawn} from "node:child_process";
import {existsSync, readFileSync, statSync} from "node:fs";
import {createServer} from "node:net";
import {join} from "node:path";
import Database from "better-sqlite3";
import {tempDir} from "../support/gateway.js";
import {launchGatewayProcess, startGatewayProcess} from "../support/gateway-process.js";

describe("the gateway process", () => {
  // Two real processes, each starting from the TypeScript sources: more than the default 20 s on a busy machine.
  it(
    "starts on defaults, survives SIGTERM cleanly and keeps every accepted alert across a restart",
    {timeout: 60_000},
    async () => {
      const dataDir = tempDir();
      const first = await startGatewayProcess(dataDir, {
        KLAXON_SMTP_PASSWORD: "hunter2-smtp",
        KLAXON_TELEGRAM_BOT_TOKEN: "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr"
      });
      const keyFile = join(dataDir, "initial-admin-key");
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readFileSync(keyFile, "utf8").trim();
      const headers = {"X-API-Key": key, "Content-Type": "application/json"};
      const recipient = (await (
        await fetch(`${first.url}/api/v1/recipients`, {
          method: "POST",
          headers,
          body: JSON.stringify({email: "ops@factory.lan"})
        })
      ).json()) as {uuid: string};
      const sent = await fetch(`${first.url}/api/v1/notifications/send`, {
        method: "POST",
        headers,
        body: JSON.stringify({recipient_uuid: recipient.uuid, message: "kept", priority: "high"})
      });
      expect(sent.status).toBe(202);
      const {notification_uuid: id} = (await sent.json()) as {notification_uuid: string};

      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
      expect(first.lines.some((line) => line.includes('"gateway stopped"'))).toBe(true);
      const journal = join(dataDir, "journal.sqlite");
      expect(!existsSync(`${journal}-wal`) || statSync(`${journal}-wal`).size === 0).toBe(true);
      const db = new Database(journal, {readonly: true});
      expect(db.pragma("integrity_check", {simple: true})).toBe("ok");
      db.close();

      const keyFileMtime = statSync(keyFile).mtimeMs;
      const second = await startGatewayProcess(dataDir);
      try {
        const read = await fetch(`${second.url}/api/v1/notifications/${id}`, {headers});
        expect(read.status).toBe(200);
        expect(((await read.json()) as {message: string}).message).toBe("kept");
        expect(statSync(keyFile).mtimeMs).toBe(keyFileMtime);
        expect(second.lines.some((line) => line.includes("created the initial admin API key"))).toBe(false);
      } finally {
        second.child.kill("SIGTERM");
        await second.exited;
      }
      const log = [...first.lines, ...second.lines].join("\n");
      expect(log).not.toContain(key);
      expect(log).not.toContain("hunter2-smtp");
      expect(log).not.toContain("AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr");
      expect(first.lines.every((line) => JSON.parse(line).level)).toBe(true);
    }
  );

  it("stops cleanly on a SIGTERM that comes while it is still starting", {timeout: 60_000}, async () => {
    const gateway = launchGatewayProcess(tempDir());
    const deadline = Date.now() + 20_000;
    while (!gateway.lines.some((line) => line.includes('"starting klaxon"')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    // Before the journal is open and the port bound: the stop waits for the start, then undoes it.
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(gateway.lines.some((line) => line.includes('"shutting down"'))).toBe(true);
    expect(gateway.lines.some((line) => line.includes('"gateway stopped"'))).toBe(true);
  });

  it("runs under `npm start`, says it is compiling before the silent first seconds, and stops with npm on SIGTERM", async () => {
    const dataDir = tempDir();
    const npm = spawn("npm", ["start"], {
      cwd: join(import.meta.dirname, "../.."),
      env: {...process.env, KLAXON_HOST: "127.0.0.1", KLAXON_PORT: "0", KLAXON_DATA_DIR: dataDir},
      stdio: ["ignore", "pipe", "pipe"]
    });
    const output: Array<{stream: "stdout" | "stderr"; line: string}> = [];
    for (const stream of ["stdout", "stderr"] as const)
      npm[stream].on("data", (chunk: Buffer) =>
        output.push(
          ...chunk
            .toString()
            .split("\n")
            .filter(Boolean)
            .map((line) => ({stream, line}))
        )
      );
    const npmExited = new Promise<number | null>((resolve) => npm.on("close", (code) => resolve(code)));
    const serving = () => output.find(({line}) => line.includes('"gateway serving"'));
    const deadline = Date.now() + 90_000;
    while (!serving() && npm.exitCode === null && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const url = new URL(JSON.parse(serving()!.line).url);
    // The notice comes first, on stderr: stdout stays JSON lines only.
    expect(output.find(({line}) => line.startsWith("klaxon: compiling TypeScript"))?.stream).toBe("stderr");
    expect(output.findIndex(({line}) => line.startsWith("klaxon: compiling TypeScript"))).toBeLessThan(
      output.findIndex(({line}) => line.startsWith("{"))
    );
    const gatewayPid = Number(readFileSync(join(dataDir, "klaxon.pid"), "utf8"));
    expect(gatewayPid).not.toBe(npm.pid);

    // As `kill -TERM <pid of npm>` from a shell or a process manager does: the gateway alone gets no signal.
    npm.kill("SIGTERM");
    await npmExited;
    const alive = () => {
      try {
        process.kill(gatewayPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const stopBy = Date.now() + 10_000;
    while (alive() && Date.now() < stopBy) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive()).toBe(false);
    expect(output.some(({line}) => line.includes('"gateway stopped"'))).toBe(true);
    // The port is free again: something else can listen on it.
    const probe = createServer();
    await new Promise<void>((resolve, reject) =>
      probe.once("error", reject).listen(Number(url.port), "127.0.0.1", resolve)
    );
    await new Promise((resolve) => probe.close(resolve));
  }, 120_000);

  it("refuses to start on a corrupt config store and names the file", async () => {
    const dataDir = tempDir();
    const {writeFileSync} = await import("node:fs");
    writeFileSync(join(dataDir, "config.json"), "{broken");
    const gateway = launchGatewayProcess(dataDir);
    expect(await gateway.exited).toBe(78);
    expect(gateway.lines.join("\n")).toContain(`config store ${join(dataDir, "config.json")} is not valid JSON`);
    expect(readFileSync(join(dataDir, "config.json"), "utf8")).toBe("{broken");
  });
});
