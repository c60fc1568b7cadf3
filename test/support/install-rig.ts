import {afterEach, beforeAll, expect, inject} from "vitest";
import {spawnSync} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {setTimeout as sleep} from "node:timers/promises";
import {INSTALL_SCRATCH} from "./release-cache.js";

export const ROOT = join(import.meta.dirname, "../..");
export const INSTALL = join(ROOT, "install.sh");
/** install.sh and npm run package make their work folders (mktemp) where the staged roots are. */
const SCRATCH_ENV = {...process.env, TMPDIR: INSTALL_SCRATCH};
const PACKAGE_LIMIT_MS = 480_000;

/** install.sh (the checkout's, or `script`: an unpacked release's) with these arguments: its exit status and output. */
export function install(args: string[], script = INSTALL) {
  const result = spawnSync("bash", [script, ...args], {encoding: "utf8", env: SCRATCH_ENV});
  return {status: result.status, stdout: result.stdout, stderr: result.stderr};
}

/** The plan install.sh writes into a staged root: one action a line. */
export const installPlan = (root: string) => readFileSync(join(root, "klaxon-install.plan"), "utf8").trim().split("\n");

/**
 * The release tarball for `arch`, made exactly as `npm run package` makes it, once per test run: the
 * first file to ask packages it into the run's release cache (test/support/release-cache.ts), a
 * file asking meanwhile waits for it, and a failed packaging fails every file that asked.
 */
async function sharedRelease(arch: string): Promise<string> {
  const dir = join(inject("releaseCache"), arch);
  const made = join(dir, "tarball");
  const failed = join(dir, "failed");
  let mine = true;
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    mine = false;
  }
  if (mine) {
    const result = spawnSync("npm", ["run", "--silent", "package", "--", "--arch", arch, "--out", dir], {
      cwd: ROOT,
      encoding: "utf8",
      env: SCRATCH_ENV
    });
    if (result.status !== 0) {
      const why = `npm run package failed:\n${result.stdout}\n${result.stderr}`;
      writeFileSync(failed, why);
      throw new Error(why);
    }
    writeFileSync(`${made}.part`, result.stdout.trim().split("\n").at(-1)!);
    renameSync(`${made}.part`, made);
  }
  for (const deadline = Date.now() + PACKAGE_LIMIT_MS; !existsSync(made); await sleep(250)) {
    if (existsSync(failed)) throw new Error(`another test file's packaging failed: ${readFileSync(failed, "utf8")}`);
    if (Date.now() > deadline) throw new Error(`no ${arch} release in ${dir} after ${PACKAGE_LIMIT_MS} ms`);
  }
  return readFileSync(made, "utf8");
}

/**
 * The release of `arch` (this machine's CPU unless told) for the whole test file, and temp dirs
 * (on the install scratch) removed after each test: each staged install holds a copy of the
 * production node_modules. `release.tarball` is set once beforeAll ran; the tarball is shared with
 * the run's other files and is only read.
 */
export function useRelease(arch: string = process.arch): {
  release: {tarball: string};
  tempDir: (prefix?: string) => string;
  stage: (root: string, ...more: string[]) => ReturnType<typeof install>;
} {
  const release = {tarball: ""};
  let scratch: string[] = [];
  const tempDir = (prefix = "klaxon-test-") => {
    const dir = mkdtempSync(join(INSTALL_SCRATCH, prefix));
    scratch.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of scratch) rmSync(dir, {recursive: true, force: true});
    scratch = [];
  }, 120_000);
  beforeAll(async () => {
    release.tarball = await sharedRelease(arch);
  }, PACKAGE_LIMIT_MS + 60_000);
  /** install.sh of the release into a staged root, which must succeed without a word on stderr. */
  const stage = (root: string, ...more: string[]) => {
    const result = install(["--root", root, "--offline", release.tarball, ...more]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    return result;
  };
  return {release, tempDir, stage};
}
