import {createHash, randomBytes, timingSafeEqual} from "node:crypto";
import {chmodSync, existsSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import type {ApiKeyRecord} from "../../store/config/config-store.js";
import type {ApiKeysRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken} from "../../lib/tokens.js";
import {notFound} from "../shared/errors.js";
import type {Scope} from "../../domain/vocabulary.js";
import type {Logger} from "../../lib/logger.js";

const KEY_PATTERN = /^klx_([a-z0-9]{8})_([A-Za-z0-9_-]{32,128})$/;
const PUBLIC_ID_ALPHABET = "abcdefghijkmnopqrstuvwxyz23456789";
// Only keys that matched are kept, one entry per key in use; a gateway with more keys than this
// in use starts the cache over rather than grow it.
const VERIFIED_KEYS_MAX = 64;
// last_used_at is for people ("is this key still in use?"): minute precision keeps the config file quiet.
const LAST_USED_RESOLUTION_MS = 60_000;

function secretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

function hashSecret(secret: string): string {
  return secretDigest(secret).toString("hex");
}

function newPublicId(): string {
  return Array.from(randomBytes(8), (byte) => PUBLIC_ID_ALPHABET[byte % PUBLIC_ID_ALPHABET.length]).join("");
}

/** The public view of a key: everything but the hash (owner null on keys made before owners). */
export function describeKey(record: ApiKeyRecord) {
  const {secret_hash: _hash, ...visible} = record;
  return {...visible, owner: record.owner ?? null};
}

/** Where the first start leaves the admin key it made, in the data dir. */
export const INITIAL_ADMIN_KEY_FILE = "initial-admin-key";

/** API keys: created with their secret shown once, stored as a hash, checked in constant time. */
export class ApiKeysService {
  private readonly lastUsed = new Map<string, number>();
  /**
   * Presented keys already found to match, with the stored hash they matched: a busy sender's key
   * is hashed once, not on every request. An entry counts only while the key's stored hash is
   * the same; revocation is checked on every request. Held in memory only, as the process holds
   * every other secret it uses.
   */
  private readonly verified = new Map<string, string>();

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly logger: Logger
  ) {}

  async create(
    name: string,
    scopes: Scope[],
    actor: Actor | null,
    owner: string | null = null
  ): Promise<{record: ApiKeyRecord; key: string}> {
    let id = newPublicId();
    while (this.keys.get(id)) id = newPublicId();
    const secret = secretToken(32);
    const record: ApiKeyRecord = {
      id,
      name,
      scopes: [...new Set(scopes)],
      secret_hash: hashSecret(secret),
      created_at: isoTimestamp(this.clock.now()),
      created_by: actor?.id ?? null,
      revoked_at: null,
      last_used_at: null,
      owner
    };
    await this.keys.insert(record);
    await this.audit.record(
      actor ?? SYSTEM_ACTOR,
      "api_key.created",
      {type: "api_key", id},
      {name, scopes: record.scopes, owner}
    );
    return {record, key: `klx_${id}_${secret}`};
  }

  list(): ApiKeyRecord[] {
    return this.keys.all();
  }

  async revoke(id: string, actor: Actor): Promise<ApiKeyRecord> {
    const record = this.keys.get(id);
    if (!record) throw notFound("API key", id);
    if (record.revoked_at) return record;
    const revoked = {...record, revoked_at: isoTimestamp(this.clock.now())};
    await this.keys.replace(revoked);
    await this.audit.record(actor, "api_key.revoked", {type: "api_key", id}, {name: record.name});
    return revoked;
  }

  /** The active key a presented value belongs to, or null. Never says which part was wrong. */
  authenticate(presented: string): ApiKeyRecord | null {
    const match = KEY_PATTERN.exec(presented);
    if (!match) return null;
    const record = this.keys.get(match[1]);
    if (!record || record.revoked_at) return null;
    if (this.verified.get(presented) !== record.secret_hash) {
      if (!timingSafeEqual(Buffer.from(record.secret_hash, "hex"), secretDigest(match[2]))) return null;
      if (this.verified.size >= VERIFIED_KEYS_MAX) this.verified.clear();
      this.verified.set(presented, record.secret_hash);
    }
    this.noteUse(record);
    return record;
  }

  private noteUse(record: ApiKeyRecord): void {
    const now = this.clock.now();
    const previous = this.lastUsed.get(record.id) ?? (record.last_used_at ? Date.parse(record.last_used_at) : 0);
    if (now - previous < LAST_USED_RESOLUTION_MS) return;
    this.lastUsed.set(record.id, now);
    const current = this.keys.get(record.id);
    if (current)
      this.keys
        .replace({...current, last_used_at: isoTimestamp(now)})
        .catch((error) => this.logger.warn("could not record key use", {key_id: record.id, error}));
  }

  /**
   * First start: with no key at all, create one admin key and leave it in a 0600 file in the
   * data directory for the operator. The key never reaches the log, only the file's path.
   */
  async ensureInitialAdminKey(dataDir: string): Promise<string | null> {
    if (this.keys.all().length > 0) return null;
    const {key} = await this.create("initial admin", ["admin"], null);
    const path = join(dataDir, INITIAL_ADMIN_KEY_FILE);
    writeFileSync(path, key + "\n", {mode: 0o600});
    if (existsSync(path)) chmodSync(path, 0o600);
    this.logger.info("created the initial admin API key", {file: path});
    return path;
  }
}

export function hasScope(record: Pick<ApiKeyRecord, "scopes">, scope: Scope): boolean {
  return record.scopes.includes("admin") || record.scopes.includes(scope);
}
