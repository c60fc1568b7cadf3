import {existsSync, readdirSync, readFileSync, readlinkSync, realpathSync} from "node:fs";
import {join} from "node:path";
import {SupervisedProcess} from "../../src/ops/replication/supervised-process.js";
import {createLogger} from "../../src/lib/logger.js";

/** The Litestream test/run-all.sh builds from the Go module proxy (npm test does it once). */
export const LITESTREAM = join(import.meta.dirname, "../../.tools/litestream");

/** Fails the suite, not skips it: a replication test that did not run proved nothing. */
export function requireLitestream(): string {
  if (!existsSync(LITESTREAM))
    throw new Error(`${LITESTREAM} is missing: npm test (test/run-all.sh) builds it with go install, once`);
  return LITESTREAM;
}

/**
 * `litestream restore -f`, kept running as a standby keeps it: `copy` follows the replica in
 * `folder`. A follow that ends (a replica caught between two compactions) starts again.
 */
export function followReplica(folder: string, copy: string, lines: string[] = []): SupervisedProcess {
  const follower = new SupervisedProcess(
    requireLitestream(),
    ["restore", "-f", "-follow-interval", "200ms", "-o", copy, `file://${folder}`],
    createLogger("debug", (line) => lines.push(line))
  );
  follower.start();
  return follower;
}

/**
 * Ends every process of this checkout's Litestream that lost its parent (PPid 1): what a test's
 * SIGKILLed gateway left behind once the test is over. Such an orphan would outlive npm test and
 * hold whatever the run's pipes are, so each replication file calls this in afterAll.
 */
export function endOrphanedLitestreams(): void {
  if (!existsSync(LITESTREAM)) return;
  const binary = realpathSync(LITESTREAM);
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const orphan = /^PPid:\s+1$/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (orphan && readlinkSync(`/proc/${pid}/exe`) === binary) process.kill(Number(pid), "SIGKILL");
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
}
