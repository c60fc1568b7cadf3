import {readFileSync, rmSync, writeFileSync} from "node:fs";
import {join} from "node:path";

/** The file a running gateway keeps in its data dir, holding its process id. */
export const PID_FILE = "klaxon.pid";

/**
 * Marks a data dir as in use by this process, so offline tools (restore) can refuse to swap
 * files under a running gateway. It never stops a start: after a power cut the file is stale,
 * and a gateway that refused to start over it would be an outage.
 */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string, pid = process.pid): DataDirLock {
    const path = join(dataDir, PID_FILE);
    writeFileSync(path, `${pid}\n`, {mode: 0o644});
    return new DataDirLock(path);
  }

  release(): void {
    rmSync(this.path, {force: true});
  }
}

/** The id of a live process holding `dataDir`, or null when none does (no file, or a stale one). */
export function dataDirHolder(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, PID_FILE), "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but belongs to another user (the klaxon service user).
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : null;
  }
}
