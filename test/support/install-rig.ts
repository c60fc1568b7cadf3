import {afterAll, afterEach, beforeAll, expect} from "vitest";
import {spawnSync} from "node:child_process";
import {readFileSync, rmSync} from "node:fs";
import {join} from "node:path";
import {tempDir as makeTempDir} from "./gateway.js";

export const ROOT = join(import.meta.dirname, "../..");
export const INSTALL = join(ROOT, "install.sh");

/** install.sh with these arguments: its exit status and output. */
export function install(args: string[]) {
  const result = spawnSync("bash", [INSTALL, ...args], {encoding: "utf8"});
  return {status: result.status, stdout: result.stdout, stderr: result.stderr};
}

/** The plan install.sh writes into a staged root: one action a line. */
export const installPlan = (root: string) => readFileSync(join(root, "klaxon-install.plan"), "utf8").trim().split("\n");

/**
 * One release of this machine's CPU for the whole test file, made exactly as `npm run package`
 * makes it, and temp dirs removed after each test (each staged install holds a copy of the
 * production node_modules). `release.tarball` and `release.dir` are set once beforeAll ran.
 */
export function useRelease(): {
  release: {tarball: string; dir: string};
  tempDir: (prefix?: string) => string;
  stage: (root: string, ...more: string[]) => ReturnType<typeof install>;
} {
  const release = {tarball: "", dir: ""};
  let scratch: string[] = [];
  const tempDir = (prefix?: string) => {
    const dir = makeTempDir(prefix);
    scratch.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of scratch) rmSync(dir, {recursive: true, force: true});
    scratch = [];
  }, 120_000);
  afterAll(() => rmSync(release.dir, {recursive: true, force: true}));
  beforeAll(() => {
    release.dir = makeTempDir("klaxon-release-");
    const result = spawnSync(
      "npm",
      ["run", "--silent", "package", "--", "--arch", process.arch, "--out", release.dir],
      {cwd: ROOT, encoding: "utf8"}
    );
    if (result.status !== 0) throw new Error(`npm run package failed:\n${result.stdout}\n${result.stderr}`);
    release.tarball = result.stdout.trim().split("\n").at(-1)!;
  }, 300_000);
  /** install.sh of the release into a staged root, which must succeed without a word on stderr. */
  const stage = (root: string, ...more: string[]) => {
    const result = install(["--root", root, "--offline", release.tarball, ...more]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    return result;
  };
  return {release, tempDir, stage};
}
