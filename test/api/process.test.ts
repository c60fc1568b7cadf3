import {describe, expect, it} from "vitest";
import {spawn, type ChildProcess} from "node:child_process";
import {existsSync, readFileSync, statSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {tempDir} from "../support/gateway.js";

const ROOT = join(import.meta.dirname, "../..");

interface Running {
  child: ChildProcess;
  url: string;
  lines: string[];
  exited: Promise<number | null>;
}

/** Starts the gateway exactly as the README does (npm start's command), on a free port. */
async function startProcess(dataDir: string, secrets: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", "src/main.ts"], {
    cwd: ROOT,
    env: {...process.env, KLAXON_HOST: "127.0.0.1", KLAXON_PORT: "0", KLAXON_DATA_DIR: dataDir, ...secrets},
    stdio: ["ignore", "pipe", "pipe"]
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${lines.join("\n")}`)), 20_000);
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        lines.push(line);
        if (line.includes('"gateway serving"')) {
          clearTimeout(timer);
          resolve(JSON.parse(line).url);
        }
      }
    };
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    child.on("exit", () => reject(new Error(`gateway exited:\n${lines.join("\n")}`)));
  });
  return {child, url, lines, exited};
}

describe("the gateway process", () => {
  it("starts on defaults, survives SIGTERM cleanly and keeps every accepted alert across a restart", async () => {
    const dataDir = tempDir();
    const first = await startProcess(dataDir, {KLAXON_SMTP_PASSWORD: "hunter2-smtp", KLAXON_TELEGRAM_BOT_TOKEN: "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr"});
    const keyFile = join(dataDir, "initial-admin-key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, "utf8").trim();
    const headers = {"X-API-Key": key, "Content-Type": "application/json"};
    const recipient = (await (await fetch(`${first.url}/api/v1/recipients`, {method: "POST", headers, body: JSON.stringify({email: "ops@factory.lan"})})).json()) as {uuid: string};
    const sent = await fetch(`${first.url}/api/v1/notifications/send`, {method: "POST", headers, body: JSON.stringify({recipient_uuid: recipient.uuid, message: "kept", priority: "high"})});
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
    const second = await startProcess(dataDir);
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
  });

  it("refuses to start on a corrupt config store and names the file", async () => {
    const dataDir = tempDir();
    const {writeFileSync} = await import("node:fs");
    writeFileSync(join(dataDir, "config.json"), "{broken");
    const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", "src/main.ts"], {
      cwd: ROOT,
      env: {...process.env, KLAXON_HOST: "127.0.0.1", KLAXON_PORT: "0", KLAXON_DATA_DIR: dataDir}
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(output).toContain(`config store ${join(dataDir, "config.json")} is not valid JSON`);
    expect(readFileSync(join(dataDir, "config.json"), "utf8")).toBe("{broken");
  });
});
