import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  renameSync,
  statSync,
  writeFileSync
} from "node:fs";
import {join, resolve} from "node:path";
import {isoTimestamp, systemClock, type Clock} from "../lib/clock.js";
import {BACKUP_FILES, OPTIONAL_BACKUP_FILES} from "./backup-layout.js";
import {dataDirHolder} from "./data-dir-lock.js";
import {JOURNAL_FILE_SUFFIXES} from "../store/journal/wal-guard.js";

/** Why a restore was refused; nothing in the data dir has changed when this is thrown. */
export class RestoreError extends Error {
  override name = "RestoreError";
}

export interface RestoreResult {
  /** Where the files the restore replaced were moved, or null when the data dir held none. */
  moved_aside: string | null;
  restored: string[];
}

const SQLITE_HEADER = "SQLite format 3\u0000";
// Everything that makes up the live state; the WAL and shared-memory files belong to the journal.
const LIVE_FILES = [
  ...JOURNAL_FILE_SUFFIXES.map((suffix) => BACKUP_FILES.journal + suffix),
  BACKUP_FILES.config,
  `${BACKUP_FILES.config}.bak`,
  ...Object.values(OPTIONAL_BACKUP_FILES)
];

/** The backup's config store without its record of the journal (see restoreBackup); null when it holds none (copied as it is). */
function validateBackup(backupDir: string): string | null {
  const journal = join(backupDir, BACKUP_FILES.journal);
  const config = join(backupDir, BACKUP_FILES.config);
  if (!existsSync(journal) || !existsSync(config))
    throw new RestoreError(
      `${backupDir} is not a Klaxon backup: it needs ${BACKUP_FILES.journal} and ${BACKUP_FILES.config}`
    );
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(journal, "r");
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1") !== SQLITE_HEADER) throw new RestoreError(`${journal} is not an SQLite database`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(config, "utf8"));
  } catch (error) {
    throw new RestoreError(`${config} is not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new RestoreError(`${config} is not a Klaxon config store (expected a JSON object)`);
  if (!("journal" in parsed)) return null;
  const {journal: _record, ...restored} = parsed as Record<string, unknown>;
  return JSON.stringify(restored, null, 2) + "\n";
}

/**
 * Puts a backup back into a data dir, with no gateway running on it: validates the backup, moves
 * the current journal and config store aside into `pre-restore-<time>/` (nothing is deleted),
 * then copies the backup in, each file under a temporary name renamed into place. The restored
 * files get the data dir's owner, so the service user can open them after a restore run as root.
 * The config store's record of the journal is left out: it named the journal as it was when the
 * backup was made (perhaps open, perhaps further on), and the first start after a restore records
 * the restored journal afresh (docs/operations.md, "The journal's identity").
 */
export function restoreBackup(backupDir: string, dataDir: string, options: {clock?: Clock} = {}): RestoreResult {
  const source = resolve(backupDir);
  const target = resolve(dataDir);
  const config = validateBackup(source);
  if (!existsSync(target)) throw new RestoreError(`data dir ${target} does not exist`);
  const holder = dataDirHolder(target);
  if (holder !== null) {
    throw new RestoreError(
      `a gateway (process ${holder}) is running on ${target}; stop it first (systemctl stop klaxon), or delete ${join(target, "klaxon.pid")} if no gateway runs`
    );
  }
  const owner = statSync(target);
  const stamp = isoTimestamp((options.clock ?? systemClock).now())
    .replace(/\.\d+Z$/, "Z")
    .replace(/:/g, "-");
  const present = LIVE_FILES.filter((file) => existsSync(join(target, file)));
  let aside: string | null = null;
  if (present.length) {
    aside = join(target, `pre-restore-${stamp}`);
    mkdirSync(aside, {mode: 0o700});
    for (const file of present) renameSync(join(target, file), join(aside, file));
  }
  const restored: string[] = [];
  const optional = Object.values(OPTIONAL_BACKUP_FILES).filter((file) => existsSync(join(source, file)));
  for (const file of [BACKUP_FILES.journal, BACKUP_FILES.config, ...optional]) {
    const temporary = join(target, `.${file}.restoring`);
    if (file === BACKUP_FILES.config && config !== null) writeFileSync(temporary, config, {mode: 0o600});
    else copyFileSync(join(source, file), temporary);
    if (process.getuid?.() === 0) chownSync(temporary, owner.uid, owner.gid);
    renameSync(temporary, join(target, file));
    restored.push(file);
  }
  return {moved_aside: aside, restored};
}
