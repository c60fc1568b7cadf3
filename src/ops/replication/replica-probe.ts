import {execFile} from "node:child_process";
import {mkdtempSync, rmSync} from "node:fs";
import {join} from "node:path";
import {promisify} from "node:util";
import {readBeaconFrom, type Beacon} from "../../store/journal/replication.repository.js";

const run = promisify(execFile);
/** A restore reads the whole journal: generous, since a box that cannot tell its role must not guess quickly. */
const RESTORE_LIMIT_MS = 120_000;

/**
 * The beacon of the newest state the peer shipped into this box's `incoming` folder: restored once
 * into a scratch copy under `dataDir`, read, deleted. Null when the folder holds no replica (the peer
 * was never the active). A restore that fails otherwise throws: the caller cannot tell which box
 * holds the newer state, and starting on the older one would hide what the other accepted.
 */
export async function beaconOfReplica(litestream: string, incoming: string, dataDir: string): Promise<Beacon | null> {
  const scratch = mkdtempSync(join(dataDir, "replica-probe-"));
  try {
    const copy = join(scratch, "journal.sqlite");
    await run(litestream, ["restore", "-if-replica-exists", "-o", copy, `file://${incoming}`], {
      timeout: RESTORE_LIMIT_MS
    });
    return readBeaconFrom(copy);
  } finally {
    rmSync(scratch, {recursive: true, force: true});
  }
}
