import {mkdtempSync, rmSync, statfsSync} from "node:fs";
import {freemem, tmpdir} from "node:os";
import {join} from "node:path";
import type {TestProject} from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A folder for this run's release tarballs, one per CPU architecture (test/support/install-rig.ts). */
    releaseCache: string;
  }
}

const GIB = 1024 ** 3;
const TMPFS_MAGIC = 0x01021994;

/**
 * Where the install tests package, unpack and stage releases: /dev/shm when it is a tmpfs with room
 * (and the machine has the memory for it), else the temp dir. Each staged install writes a release
 * of about 200 MB twice (install.sh unpacks it, then copies it into the root) and the test removes
 * it again: on a disk shared with every other test that is seconds of I/O each; on tmpfs it is
 * memory traffic. The files and modes install.sh produces are the same on either.
 */
export const INSTALL_SCRATCH = (() => {
  try {
    const shm = statfsSync("/dev/shm");
    if (shm.type === TMPFS_MAGIC && shm.bavail * shm.bsize >= 4 * GIB && freemem() >= 4 * GIB) return "/dev/shm";
  } catch {
    // no /dev/shm: the temp dir
  }
  return tmpdir();
})();

/**
 * vitest globalSetup: one folder per run in which the first test file that needs a release of an
 * architecture packages it and the others wait for it (install.test.ts and install-roles.test.ts
 * both install the x64 one; packaging costs half a minute of CPU and a copy of node_modules).
 * Removed when the run ends.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(INSTALL_SCRATCH, "klaxon-releases-"));
  project.provide("releaseCache", dir);
  return () => rmSync(dir, {recursive: true, force: true});
}
