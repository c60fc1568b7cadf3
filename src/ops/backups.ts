import {chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile} from "node:fs/promises";
import {existsSync} from "node:fs";
import {join} from "node:path";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {StorageUnavailableError, type Journal} from "../store/journal/journal.js";
import {BACKUP_FILES, BACKUPS_DIR, OPTIONAL_BACKUP_FILES} from "./backup-layout.js";
import {readDocument} from "../store/journal/replication.repository.js";
import {CONFIG_DOCUMENT} from "../store/config/journal-config-document.js";
import {SYSTEM_ACTOR, type Actor} from "../domain/actor.js";
import type {AuditService} from "../services/shared/audit.service.js";

const MANIFEST = "manifest.json";
// A backup is written under this prefix and renamed when complete: a listing never shows half of one.
const PARTIAL_PREFIX = ".partial-";

export interface BackupFile {
  name: string;
  bytes: number;
}

/** One backup folder under <data_dir>/backups/. */
export interface BackupInfo {
  name: string;
  created_at: string;
  path: string;
  files: BackupFile[];
}

interface Manifest {
  created_at: string;
  schema_version: number;
}

const NO_SPACE = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

/** What BackupService works with, by name. */
export interface BackupDeps {
  dataDir: string;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  keep: number;
  audit: AuditService;
}

/**
 * Online backups: the journal through SQLite's backup API (consistent while the gateway keeps
 * writing) and a copy of the config store's file (always whole: it is replaced by rename).
 * Backups hold webhook secrets and key hashes, so the folder is private to the service user.
 */
export class BackupService {
  private running: Promise<BackupInfo> | null = null;
  /** The last name handed out: within one second, later backups take the next suffix even if it was pruned. */
  private lastName: {base: string; suffix: number} | null = null;

  constructor(private readonly deps: BackupDeps) {
    if (!Number.isInteger(deps.keep) || deps.keep < 1)
      throw new Error(`backup.keep: must be a whole number of at least 1, got ${deps.keep}`);
  }

  get directory(): string {
    return join(this.deps.dataDir, BACKUPS_DIR);
  }

  /**
   * Makes a backup now, then deletes the oldest beyond `keep`, audited as `actor` (the schedule is
   * the system). Two calls at once share one backup, audited as the caller that started it.
   */
  create(actor: Actor = SYSTEM_ACTOR): Promise<BackupInfo> {
    this.running ??= this.write(actor).finally(() => (this.running = null));
    return this.running;
  }

  /** Complete backups, newest first. */
  async list(): Promise<BackupInfo[]> {
    let names: string[];
    try {
      names = (await readdir(this.directory, {withFileTypes: true}))
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
        .map((entry) => entry.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const backups = await Promise.all(names.map((name) => this.describe(name)));
    return backups.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.name.localeCompare(a.name));
  }

  /**
   * A backup holds config.json in every case, so it restores the same way anywhere. When two boxes
   * replicate, the configuration lives in the journal (docs/high-availability.md) and is written out.
   */
  private async copyConfig(to: string): Promise<void> {
    const file = join(this.deps.dataDir, BACKUP_FILES.config);
    const replicated = existsSync(file) ? null : this.deps.journal.read((db) => readDocument(db, CONFIG_DOCUMENT));
    if (replicated === null) await copyFile(file, to);
    else await writeFile(to, replicated, {mode: 0o600});
  }

  private async write(actor: Actor): Promise<BackupInfo> {
    const createdAt = isoTimestamp(this.deps.clock.now());
    await mkdir(this.directory, {recursive: true, mode: 0o700});
    const name = await this.freeName(createdAt);
    const partial = join(this.directory, PARTIAL_PREFIX + name);
    try {
      await mkdir(partial, {mode: 0o700});
      await this.deps.journal.db.backup(join(partial, BACKUP_FILES.journal));
      // SQLite makes the copy as the umask allows (0644 under npm start's 022); the copies below keep their source's 0600.
      await chmod(join(partial, BACKUP_FILES.journal), 0o600);
      await this.copyConfig(join(partial, BACKUP_FILES.config));
      for (const file of Object.values(OPTIONAL_BACKUP_FILES)) {
        if (existsSync(join(this.deps.dataDir, file)))
          await copyFile(join(this.deps.dataDir, file), join(partial, file));
      }
      const manifest: Manifest = {created_at: createdAt, schema_version: this.deps.journal.schemaVersion};
      await writeFile(join(partial, MANIFEST), JSON.stringify(manifest, null, 2) + "\n", {mode: 0o600});
      await rename(partial, join(this.directory, name));
    } catch (error) {
      await rm(partial, {recursive: true, force: true});
      this.deps.logger.error("backup failed", {error: error as Error});
      if (NO_SPACE.has((error as NodeJS.ErrnoException).code ?? "")) throw new StorageUnavailableError(error as Error);
      throw error;
    }
    const info = await this.describe(name);
    const bytes = info.files.reduce((sum, file) => sum + file.bytes, 0);
    this.deps.logger.info("backup written", {path: info.path, bytes});
    const deleted = await this.prune();
    // A backup holds every secret the gateway has, so who made one (and which it deleted) is on record.
    await this.deps.audit.record(
      actor,
      "backup.created",
      {type: "backup", id: name},
      {bytes, files: info.files.map((file) => file.name), deleted}
    );
    return info;
  }

  // Folder names are the creation time without colons (portable, sortable); a second backup in
  // the same second gets a suffix. A name is never handed out twice: one pruned within its second
  // (a small `keep`, many backups at once) would otherwise come back naming another backup, and a
  // Location or a replayed answer would point at the wrong one.
  private async freeName(createdAt: string): Promise<string> {
    const base = createdAt.replace(/\.\d+Z$/, "Z").replace(/:/g, "-");
    const existing = new Set(await readdir(this.directory));
    let suffix = this.lastName?.base === base ? this.lastName.suffix + 1 : 1;
    const named = (n: number) => (n === 1 ? base : `${base}-${n}`);
    while (existing.has(named(suffix)) || existing.has(PARTIAL_PREFIX + named(suffix))) suffix++;
    this.lastName = {base, suffix};
    return named(suffix);
  }

  /** Deletes the oldest backups beyond `keep`; returns their names. */
  private async prune(): Promise<string[]> {
    const old = (await this.list()).slice(this.deps.keep);
    for (const backup of old) {
      await rm(backup.path, {recursive: true, force: true});
      this.deps.logger.info("old backup deleted", {path: backup.path});
    }
    return old.map((backup) => backup.name);
  }

  private async describe(name: string): Promise<BackupInfo> {
    const path = join(this.directory, name);
    const entries = (await readdir(path)).filter((file) => file !== MANIFEST).sort();
    const files = await Promise.all(
      entries.map(async (file) => ({name: file, bytes: (await stat(join(path, file))).size}))
    );
    let createdAt: string;
    try {
      createdAt = (JSON.parse(await readFile(join(path, MANIFEST), "utf8")) as Manifest).created_at;
    } catch {
      // A backup made by hand (or an older Klaxon) has no manifest: its folder's time stands in.
      createdAt = (await stat(path)).mtime.toISOString();
    }
    return {name, created_at: createdAt, path, files};
  }
}
