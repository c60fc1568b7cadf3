import {execFile, spawn} from "node:child_process";
import {existsSync, mkdirSync, readFileSync, rmSync, statSync} from "node:fs";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {promisify} from "node:util";
import {tempDir} from "../../support/gateway.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
export const KLAXON_BINARY = join(root, "dist", "klaxon");
const INPUTS = join(root, "dist", "cli", "inputs.json");
const LOCK = join(root, "dist", "cli.build-lock");
const LOCK_STALE_MS = 120_000;

function isStale(): boolean {
  if (!existsSync(KLAXON_BINARY) || !existsSync(INPUTS)) return true;
  const builtAt = statSync(KLAXON_BINARY).mtimeMs;
  const inputs = JSON.parse(readFileSync(INPUTS, "utf8")) as string[];
  return inputs.some((input) => !existsSync(join(root, input)) || statSync(join(root, input)).mtimeMs > builtAt);
}

/**
 * Builds dist/klaxon with `npm run build:cli` unless it is newer than every source file inside it.
 * Test files run in parallel processes: a lock directory lets one build while the others wait.
 */
export async function ensureKlaxonBinary(): Promise<string> {
  mkdirSync(join(root, "dist"), {recursive: true});
  for (;;) {
    if (!isStale()) return KLAXON_BINARY;
    try {
      mkdirSync(LOCK);
    } catch {
      if (Date.now() - statSync(LOCK).mtimeMs > LOCK_STALE_MS) rmSync(LOCK, {recursive: true, force: true});
      await new Promise((done) => setTimeout(done, 250));
      continue;
    }
    try {
      if (isStale()) await promisify(execFile)(process.execPath, [join(root, "src/cli/build.mjs")], {cwd: root});
    } finally {
      rmSync(LOCK, {recursive: true, force: true});
    }
  }
}

export interface KlaxonRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the single executable as a user would: from an empty temp dir, with no node on PATH and no
 * node_modules anywhere near, with only the environment given. Asynchronous, because the gateway
 * it talks to runs in this same process.
 */
export function runKlaxon(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<KlaxonRun> {
  const cwd = tempDir("klaxon-cli-cwd-");
  const child = spawn(KLAXON_BINARY, args, {
    cwd,
    env: {PATH: "/nonexistent", HOME: cwd, ...env},
    stdio: ["pipe", "pipe", "pipe"]
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin ?? "");
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("close", (code) => {
      rmSync(cwd, {recursive: true, force: true});
      done({code: code ?? -1, stdout, stderr});
    });
  });
}
