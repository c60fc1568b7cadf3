import {existsSync} from "node:fs";
import {Low, type Adapter} from "lowdb";
import {AtomicJsonFile, CorruptConfigError} from "./atomic-json-file.js";
import {checkConfigShape} from "./config-shape.js";
import type {Group, Recipient} from "../../domain/recipient.js";
import type {Channel, Priority, Scope} from "../../domain/vocabulary.js";
import type {HeartbeatDefinition} from "../../domain/heartbeat.js";
import type {Schedule} from "../../domain/schedules/schedule.js";
import type {EscalationPolicy} from "../../domain/policy-levels.js";
import type {TextRule} from "../../domain/integration-rules.js";
import type {MqttIntegrationFields} from "../../domain/mqtt.js";
import type {SnmpTrapIntegrationFields} from "../../domain/snmp-trap.js";
import type {Role} from "../../domain/roles.js";
import type {PlcIntegrationFields} from "../../domain/plc/plc-integration.js";

export interface ApiKeyRecord {
  /** The public part of the key (`klx_<id>_...`), safe to show and log. */
  id: string;
  name: string;
  scopes: Scope[];
  /** SHA-256 of the secret part, hex. The secret itself is never stored. */
  secret_hash: string;
  created_at: string;
  created_by: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** Who the key belongs to, in words (a person or a team); absent on keys made before owners. */
  owner?: string | null;
}

export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** The HMAC key must be kept to sign deliveries; the file is mode 0600 and the API never shows it again. */
  secret: string;
  /** During a rotation the old secret still signs (a second signature) until it expires. */
  previous_secret?: string | null;
  previous_secret_expires_at?: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * An inbound integration: where its alerts go and the credentials its sender may use. A trap
 * integration also holds its community, v3 users and trap rules (domain/snmp-trap.ts); an mqtt
 * one its broker, topic filters and JSON mapping (domain/mqtt.ts); a modbus or opcua one its
 * device and points (domain/plc/plc-integration.ts).
 */
/** A device message no rule maps: paged as an alert (the default), or only kept in the integration's log. */
export type UnmappedPolicy = "page" | "keep";

export interface IntegrationRecord
  extends SnmpTrapIntegrationFields, Partial<MqttIntegrationFields>, PlcIntegrationFields {
  id: string;
  name: string;
  kind: "generic" | "alertmanager" | "email" | "mqtt" | "snmp_trap" | "modbus" | "opcua";
  /** Recipient or group uuid its alerts page. */
  target: string;
  default_priority: Priority;
  /** Verifies signed events (Standard Webhooks); shown once, like a webhook secret. Absent for modbus and opcua: nothing sends to them. */
  secret?: string;
  /** The unguessable part of the integration's keyless URL; absent for modbus and opcua. */
  url_token?: string;
  /** Email and MQTT: how a text message maps to an alert, first match wins; absent means none. */
  rules?: TextRule[];
  /** Device kinds: what a message no rule maps becomes; absent means "page". */
  unmapped?: UnmappedPolicy;
  created_at: string;
  updated_at: string;
}

/** A recipient's key-less iCal feed of their shifts in every schedule: the token is the URL's only secret. */
export interface CalendarFeedRecord {
  recipient_uuid: string;
  token: string;
  created_at: string;
}

/**
 * When each of a recipient's contacts last passed a test page, by channel. The contact is kept
 * beside the time so that changing an address or number makes it unverified again.
 */
export interface ContactVerificationRecord {
  recipient_uuid: string;
  channels: Partial<Record<Channel, {contact: string; verified_at: string}>>;
}

/**
 * The dashboard's single admin credential of releases before named users: a scrypt hash, null
 * until set. Loading a store moves a set one into `dashboard_users` (config-shape.ts).
 */
export interface DashboardCredential {
  password_hash: string | null;
  password_set_at: string | null;
}

/** A person who signs in to the dashboard: a scrypt hash of the password (never the password) and a role. */
export interface DashboardUserRecord {
  id: string;
  /** Unique regardless of case; typed at sign-in. */
  name: string;
  role: Role;
  /** The recipient this person is, so an acknowledgement in the dashboard is recorded as them; null for none. */
  recipient_uuid: string | null;
  password_hash: string;
  password_set_at: string;
  created_at: string;
  updated_at: string;
}

/**
 * The journal this config store was last used with (store/journal-record.ts): its id, the commits
 * it had made at its last seal, and whether a gateway had it open (no clean stop since).
 */
export interface JournalRecord {
  id: string;
  commits: number;
  open: boolean;
}

export interface ConfigData {
  version: 1;
  recipients: Recipient[];
  groups: Group[];
  api_keys: ApiKeyRecord[];
  webhooks: WebhookRecord[];
  dashboard: DashboardCredential;
  dashboard_users: DashboardUserRecord[];
  heartbeats: HeartbeatDefinition[];
  integrations: IntegrationRecord[];
  schedules: Schedule[];
  escalation_policies: EscalationPolicy[];
  calendar_feeds: CalendarFeedRecord[];
  contact_verifications: ContactVerificationRecord[];
  /** Absent until a gateway has served on this data dir with a journal that knows itself. */
  journal?: JournalRecord;
}

function emptyConfig(): ConfigData {
  return {
    version: 1,
    recipients: [],
    groups: [],
    api_keys: [],
    webhooks: [],
    dashboard: {password_hash: null, password_set_at: null},
    dashboard_users: [],
    heartbeats: [],
    integrations: [],
    schedules: [],
    escalation_policies: [],
    calendar_feeds: [],
    contact_verifications: []
  };
}

/**
 * Run-time configuration edited through the API and the dashboard, in one JSON file (lowdb).
 * Updates are serialised and copy-on-write: a mutation is applied to a copy, the copy is written
 * atomically, and only then does it become what readers see, so a failed write changes nothing.
 */
export class ConfigStore {
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: Low<ConfigData>,
    private readonly adapter: Adapter<ConfigData>
  ) {}

  /**
   * Reads the file, refusing one of the wrong shape (`checkConfigShape`). A missing file is made
   * empty only in a new data dir: when its backup or any of `dataBeside` (the journal) exists, the
   * data dir has run a gateway before, and an empty store would drop its recipients and keys. An
   * existing file is not written at open, so its `.bak` stays the copy before the last real change.
   */
  static async open(path: string, options: {dataBeside?: string[]} = {}): Promise<ConfigStore> {
    const adapter = new AtomicJsonFile<ConfigData>(path);
    const parsed = await adapter.read();
    const missing = !existsSync(path);
    if (missing) {
      const evidence = [adapter.backupPath, ...(options.dataBeside ?? [])].filter((file) => existsSync(file));
      if (evidence.length) {
        throw new CorruptConfigError(
          `config store ${path} is missing, yet ${evidence.join(" and ")} exist, so this data dir is not new; ${adapter.backupNote()}. ` +
            "Klaxon will not start on an empty store in its place: restore the file (or a backup), or move the data dir away to start afresh."
        );
      }
    }
    const data = missing ? emptyConfig() : checkConfigShape<ConfigData>(parsed, path, adapter.backupNote());
    const db = new Low<ConfigData>(adapter, data);
    db.data = data;
    if (missing) await db.write();
    return new ConfigStore(db, adapter);
  }

  /**
   * The store kept somewhere else than a file of its own (the journal, when two boxes replicate it):
   * empty when `adapter` holds nothing yet, refused when it holds something of the wrong shape.
   */
  static async openOn(adapter: Adapter<ConfigData>, where: string): Promise<ConfigStore> {
    const parsed = await adapter.read();
    const data =
      parsed === null
        ? emptyConfig()
        : checkConfigShape<ConfigData>(parsed, where, "restore the journal from a backup");
    const db = new Low<ConfigData>(adapter, data);
    if (parsed === null) await db.write();
    return new ConfigStore(db, adapter);
  }

  get data(): Readonly<ConfigData> {
    return this.db.data;
  }

  update<T>(mutate: (draft: ConfigData) => T): Promise<T> {
    return this.serialised(async () => {
      const draft = structuredClone(this.db.data);
      const result = mutate(draft);
      await this.adapter.write(draft);
      this.db.data = draft;
      return result;
    });
  }

  /** Records the journal's identity, leaving `.bak` the copy before the last edit; a store kept in the journal has none. */
  recordJournal(record: JournalRecord): Promise<void> {
    return this.serialised(async () => {
      if (!(this.adapter instanceof AtomicJsonFile)) return;
      const file = this.adapter as AtomicJsonFile<ConfigData>;
      const draft = {...structuredClone(this.db.data), journal: record};
      await file.writeKeepingBackup(draft, (backup) => ({...backup, journal: record}));
      this.db.data = draft;
    });
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

type CollectionName =
  | "recipients"
  | "groups"
  | "api_keys"
  | "webhooks"
  | "heartbeats"
  | "integrations"
  | "schedules"
  | "escalation_policies"
  | "calendar_feeds"
  | "contact_verifications"
  | "dashboard_users";
type Item<N extends CollectionName> = ConfigData[N][number];

/** One list in the config store, addressed by a key field: the repositories' shared CRUD. */
export class ConfigCollection<N extends CollectionName> {
  constructor(
    protected readonly store: ConfigStore,
    private readonly name: N,
    private readonly key: keyof Item<N> & string
  ) {}

  private idOf(item: Item<N>): string {
    return String((item as unknown as Record<string, unknown>)[this.key]);
  }

  all(): Item<N>[] {
    return this.store.data[this.name];
  }

  get(id: string): Item<N> | null {
    return this.all().find((item) => this.idOf(item) === id) ?? null;
  }

  insert(item: Item<N>): Promise<Item<N>> {
    return this.store.update((draft) => {
      (draft[this.name] as Item<N>[]).push(item);
      return item;
    });
  }

  /** Replaces the item with the same key; resolves null when it is gone. */
  replace(item: Item<N>): Promise<Item<N> | null> {
    const id = this.idOf(item);
    return this.store.update((draft) => {
      const list = draft[this.name] as Item<N>[];
      const index = list.findIndex((existing) => this.idOf(existing) === id);
      if (index < 0) return null;
      list[index] = item;
      return item;
    });
  }

  /** Replaces the item with the same key, or adds it, in one update. */
  upsert(item: Item<N>): Promise<Item<N>> {
    const id = this.idOf(item);
    return this.store.update((draft) => {
      const list = draft[this.name] as Item<N>[];
      const index = list.findIndex((existing) => this.idOf(existing) === id);
      if (index < 0) list.push(item);
      else list[index] = item;
      return item;
    });
  }

  /**
   * Replaces the item with what `change` makes of the stored one, in the store's serialised
   * update, so a check inside `change` sees every earlier change (a throw writes nothing).
   * Resolves null when the item is gone.
   */
  modify(id: string, change: (current: Item<N>) => Item<N>): Promise<Item<N> | null> {
    return this.store.update((draft) => {
      const list = draft[this.name] as Item<N>[];
      const index = list.findIndex((existing) => this.idOf(existing) === id);
      if (index < 0) return null;
      list[index] = change(list[index]);
      return list[index];
    });
  }

  remove(id: string): Promise<boolean> {
    return this.store.update((draft) => {
      const list = draft[this.name] as Item<N>[];
      const index = list.findIndex((existing) => this.idOf(existing) === id);
      if (index < 0) return false;
      list.splice(index, 1);
      return true;
    });
  }

  /** Keyset pagination in stored (creation) order; null when the cursor names no item. */
  page(limit: number, after: string | null): {items: Item<N>[]; next: string | null} | null {
    const list = this.all();
    const index = after === null ? -1 : list.findIndex((item) => this.idOf(item) === after);
    if (after !== null && index < 0) return null;
    const start = index + 1;
    const items = list.slice(start, start + limit);
    const more = start + limit < list.length;
    return {items, next: more && items.length ? this.idOf(items[items.length - 1]) : null};
  }
}
