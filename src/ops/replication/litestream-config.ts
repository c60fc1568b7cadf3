import {isAbsolute} from "node:path";
import {stringify} from "yaml";
import type {Settings} from "../../settings/defaults.js";

/**
 * How often Litestream looks at the WAL and ships what is new. Its defaults (1 s each) add up to
 * about 2 s of accepted alerts a takeover could lose; a quarter second each keeps that under 1 s
 * (the recovery point in docs/high-availability.md) for a few small uploads a second.
 */
const MONITOR_INTERVAL = "250ms";
const SYNC_INTERVAL = "250ms";

/** The replica part of Litestream's config for `replication.replica`: a folder, or sftp://user@host:port/path. */
function replicaConfig(replication: Settings["replication"]): Record<string, string> {
  const target = replication.replica;
  if (!target.startsWith("sftp://")) {
    if (!isAbsolute(target)) throw new Error(`replication.replica: a folder must be an absolute path, got "${target}"`);
    return {type: "file", path: target, "sync-interval": SYNC_INTERVAL};
  }
  const url = new URL(target);
  return {
    type: "sftp",
    host: `${url.hostname}:${url.port || "22"}`,
    user: decodeURIComponent(url.username),
    path: decodeURIComponent(url.pathname),
    "key-path": replication.sftp_key_file,
    // Litestream checks the peer against this key; without it, it would accept any host.
    "host-key": replication.sftp_host_key,
    "sync-interval": SYNC_INTERVAL
  };
}

/** Litestream's config file (YAML) for `litestream replicate`: the journal, shipped to the replica. */
export function litestreamConfig(journalPath: string, replication: Settings["replication"]): string {
  return stringify({
    dbs: [{path: journalPath, "monitor-interval": MONITOR_INTERVAL, replica: replicaConfig(replication)}]
  });
}
