import {existsSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import type {HandedIdempotency, HandedNotification} from "../../domain/tail.js";
import {readBeacon, readDocument, type Beacon} from "./replication.repository.js";

/** Written into a former journal's folder once its tail is handed over: a later start leaves it alone. */
const HANDED_OVER_FILE = "handed-over.json";

const SQL = {
  notifications: `SELECT id, target_uuid AS recipient_uuid, message, priority, source, dedup_key, link, service,
    environment, created_at, status, acknowledged_at, acknowledged_by, acknowledged_via, ack_note, resolved_at, api_key_id
    FROM notifications WHERE updated_at >= ? ORDER BY id`,
  idempotency: `SELECT api_key_id, idempotency_key AS key, fingerprint, response_status AS status,
    response_body AS body, created_at, expires_at FROM idempotency WHERE created_at >= ?`
};

/** What a former active's journal, kept aside in `folder`, says of itself and of what it changed since a time. */
export interface FormerJournal {
  /** Its newest beacon: the box that wrote it, under which epoch. */
  beacon: Beacon | null;
  /** The ack-link key (hex) it shares with the other box: the box token comes from it. */
  ackLinkKeyHex: string | null;
  /** Every notification it changed at or after `sinceIso`, each with its Idempotency-Key's answer when it has one. */
  tail(sinceIso: string): HandedNotification[];
  close(): void;
}

/** Opens the journal (`file`) a former active kept aside in `folder`, read-only; null when there is none, or its tail was handed over. */
export function openFormerJournal(folder: string, file: string): FormerJournal | null {
  const path = join(folder, file);
  if (!existsSync(path) || existsSync(join(folder, HANDED_OVER_FILE))) return null;
  const db = new Database(path, {readonly: true, fileMustExist: true});
  return {
    beacon: readBeacon(db),
    ackLinkKeyHex: readDocument(db, "ack_link_key"),
    tail(sinceIso) {
      const keys = new Map<string, HandedIdempotency>();
      for (const row of db.prepare(SQL.idempotency).all(sinceIso) as HandedIdempotency[]) {
        const answered = answeredId(row.body);
        if (answered) keys.set(answered, row);
      }
      const rows = db.prepare(SQL.notifications).all(sinceIso) as Omit<HandedNotification, "idempotency">[];
      return rows.map((row) => ({...row, idempotency: keys.get(row.id) ?? null}));
    },
    close: () => db.close()
  };
}

/** Notes that the folder's tail came home (what the new active said of it), so no later start hands it over again. */
export function markHandedOver(folder: string, outcome: Record<string, unknown>): void {
  writeFileSync(join(folder, HANDED_OVER_FILE), JSON.stringify(outcome, null, 2) + "\n", {mode: 0o600});
}

/** The notification a stored 202 answer names. */
function answeredId(body: string): string | null {
  try {
    const id = (JSON.parse(body) as {notification_uuid?: unknown}).notification_uuid;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}
