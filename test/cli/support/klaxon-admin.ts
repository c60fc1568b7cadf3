import {execFile, spawn} from "node:child_process";
import {existsSync, mkdirSync, readFileSync, rmSync, statSync} from "node:fs";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {promisify} from "node:util";
import {tempDir} from "../../support/gateway.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
export const KLAXON_ADMIN_BUNDLE = join(root, "dist", "cli", "klaxon-admin.cjs");
const INPUTS = join(root, "dist", "cli", "inputs.json");
const LOCK = join(root, "dist", "cli.build-lock");
const LOCK_STALE_MS = 120_000;

function isStale(): boolean {
  if (!existsSync(KLAXON_ADMIN_BUNDLE) || !existsSync(INPUTS)) return true;
  const builtAt = statSync(KLAXON_ADMIN_BUNDLE).mtimeMs;
  const inputs = JSON.parse(readFileSync(INPUTS, "utf8")) as string[];
  return inputs.some((input) => !existsSync(join(root, input)) || statSync(join(root, input)).mtimeMs > builtAt);
}

/**
 * Bundles klaxon-admin with `npm run build:admin-cli` unless the bundle is newer than every source
 * file inside it. Test files run in parallel processes: a lock directory lets one build while the others wait.
 */
export async function ensureKlaxonAdmin(): Promise<string> {
  mkdirSync(join(root, "dist"), {recursive: true});
  for (;;) {
    if (!isStale()) return KLAXON_ADMIN_BUNDLE;
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

export interface KlaxonAdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the bundle as the installed bin/klaxon-admin does, with a Node and nothing else: from an
 * empty temp dir, no node_modules anywhere near, nothing on PATH, only the environment given.
 * Asynchronous, because the gateway it talks to runs in this same process.
 */
export function runKlaxonAdmin(
  args: string[],
  env: Record<string, string> = {},
  stdin?: string
): Promise<KlaxonAdminRun> {
  const cwd = tempDir("klaxon-admin-cwd-");
  const child = spawn(process.execPath, [KLAXON_ADMIN_BUNDLE, ...args], {
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
