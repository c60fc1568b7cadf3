// The baseline's journal: the subset of Klaxon's schema an accepted alert writes to, the same
// storage settings, and the rows of one alert, built like NotificationsService.send() builds them.
// Shared by the baseline server's main thread (BASELINE_WRITER=main, the default) and its writer
// thread (BASELINE_WRITER=worker, baseline-writer.worker.mjs).

import {randomBytes} from "node:crypto";
import {fsync, openSync} from "node:fs";
import Database from "better-sqlite3";

// The subset of Klaxon's schema (src/store/journal/migrations.ts, as migrated to the latest
// version) that an accepted alert writes to, indexes included (they are part of the cost of each
// insert).
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS notifications (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    target_uuid TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    message TEXT NOT NULL,
    priority TEXT NOT NULL,
    source TEXT,
    dedup_key TEXT,
    link TEXT,
    service TEXT,
    environment TEXT,
    occurrences INTEGER NOT NULL DEFAULT 1,
    channels_planned TEXT NOT NULL,
    escalation_chain_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    acknowledged_via TEXT,
    ack_note TEXT,
    resolved_at TEXT,
    api_key_id TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS notifications_status ON notifications(status, id);
  CREATE INDEX IF NOT EXISTS notifications_target ON notifications(target_uuid, id);
  CREATE UNIQUE INDEX IF NOT EXISTS notifications_open_dedup ON notifications(target_uuid, dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('queued', 'notifying');
  CREATE INDEX IF NOT EXISTS notifications_dedup ON notifications(dedup_key, id) WHERE dedup_key IS NOT NULL;

  CREATE TABLE IF NOT EXISTS escalations (
    id TEXT PRIMARY KEY,
    notification_id TEXT NOT NULL UNIQUE REFERENCES notifications(id),
    policy TEXT NOT NULL,
    step INTEGER NOT NULL DEFAULT 0,
    steps_total INTEGER NOT NULL,
    next_step_at TEXT,
    generation INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    grouped_with TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS escalations_due ON escalations(next_step_at) WHERE next_step_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS escalations_grouped ON escalations(grouped_with) WHERE grouped_with IS NOT NULL;

  CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT,
    action TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    source TEXT,
    detail TEXT NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS audit_subject ON audit(subject_id, seq);
  CREATE INDEX IF NOT EXISTS audit_action ON audit(action, seq);
  CREATE INDEX IF NOT EXISTS audit_at ON audit(at);

  CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    notification_id TEXT,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS events_notification ON events(notification_id);
`;

/**
 * Opens (creating) the journal at `dbPath` with Klaxon's storage settings. `commitBatch(inputs,
 * nowMs)` writes every alert of a batch in one IMMEDIATE transaction and returns their answers.
 */
export function openJournal(dbPath) {
  const db = new Database(dbPath);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.pragma("wal_autocheckpoint = 0");
  db.exec(SCHEMA);

  const insertNotification =
    db.prepare(`INSERT INTO notifications (id, status, target_uuid, target_kind, message, priority, source, dedup_key, link, service,
    environment, occurrences, channels_planned, escalation_chain_id, created_at, updated_at, acknowledged_at, acknowledged_by, acknowledged_via, ack_note,
    resolved_at, api_key_id) VALUES (?, 'queued', ?, 'recipient', ?, ?, ?, NULL, NULL, NULL, NULL, 1, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?)`);
  const insertEscalation =
    db.prepare(`INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state)
    VALUES (?, ?, ?, 0, ?, ?, 0, 'running')`);
  const insertAudit =
    db.prepare(`INSERT INTO audit (at, actor_type, actor_id, action, subject_type, subject_id, source, detail)
    VALUES (?, 'api_key', ?, 'notification.accepted', 'notification', ?, ?, ?)`);
  const insertEvent = db.prepare(
    `INSERT INTO events (id, type, notification_id, created_at, body) VALUES (?, 'escalation.started', ?, ?, ?)`
  );

  // Time-sortable ids shaped like Klaxon's (prefix + 26 Crockford base32 characters).
  const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const randomPart = Array.from(randomBytes(12), (byte) => ALPHABET[byte % 32]).join("");
  let counter = 0;
  function newId(prefix, ms) {
    let time = "";
    let rest = ms;
    for (let i = 0; i < 10; i++) {
      time = ALPHABET[rest % 32] + time;
      rest = Math.floor(rest / 32);
    }
    let count = "";
    let n = counter++;
    for (let i = 0; i < 4; i++) {
      count = ALPHABET[n % 32] + count;
      n = Math.floor(n / 32);
    }
    return `${prefix}_${time}${randomPart}${count}`;
  }

  const API_KEY_ID = "baseline";
  const CHANNELS = ["email"];

  /** The rows of one accepted alert, built like NotificationsService.send() builds them. */
  function writeAlert(input, nowMs) {
    const now = new Date(nowMs).toISOString();
    const id = newId("notif", nowMs);
    const chainId = newId("esc", nowMs);
    const eventId = newId("evt", nowMs);
    const message = input.message.trim();
    const source = typeof input.source === "string" ? input.source : null;
    const policy = {
      target: {uuid: input.recipient_uuid, kind: "recipient", name: "Bench"},
      priority: input.priority,
      strategy: "sequential",
      members: [
        {
          recipient_uuid: input.recipient_uuid,
          name: "Bench",
          channels: CHANNELS,
          contacts: {email: "bench@example.com"},
          ack_timeout_seconds: 120,
          repeat: 1,
          quiet_hours: null
        }
      ]
    };
    const stepsTotal = CHANNELS.length * 2;
    insertNotification.run(
      id,
      input.recipient_uuid,
      message,
      input.priority,
      source,
      JSON.stringify(CHANNELS),
      chainId,
      now,
      now,
      API_KEY_ID
    );
    insertEscalation.run(chainId, id, JSON.stringify(policy), stepsTotal, now);
    insertAudit.run(
      now,
      API_KEY_ID,
      id,
      source,
      JSON.stringify({target: input.recipient_uuid, priority: input.priority, dedup_key: null})
    );
    const self = `/api/v1/notifications/${id}`;
    const view = {
      id,
      status: "queued",
      recipient_uuid: input.recipient_uuid,
      message,
      priority: input.priority,
      channels_planned: CHANNELS,
      escalation_chain_id: chainId,
      created_at: now,
      links: {self, ack: `${self}/ack`},
      source,
      dedup_key: null,
      link: null,
      service: null,
      environment: null,
      occurrences: 1,
      updated_at: now,
      acknowledged_at: null,
      acknowledged_by: null,
      acknowledged_via: null,
      acknowledged_note: null,
      resolved_at: null,
      escalation: {step: 0, steps_total: stepsTotal, next_step_at: now},
      attempts: []
    };
    insertEvent.run(
      eventId,
      id,
      now,
      JSON.stringify({id: eventId, type: "escalation.started", created_at: now, data: {notification: view}})
    );
    return {status: "queued", notification_uuid: id, channels_planned: CHANNELS, escalation_chain_id: chainId};
  }
  const transaction = db.transaction((batch, nowMs) => batch.map((input) => writeAlert(input, nowMs)));
  return {db, commitBatch: (batch, nowMs) => transaction.immediate(batch, nowMs)};
}

/**
 * The WAL flush of src/store/journal/wal-sync.ts: one fsync at a time on the thread pool; the
 * commits made while it runs wait for the next one. Returns `afterCommit(answer)`: `answer` runs
 * once the WAL holding that commit is on disk.
 */
export function walFlusher(dbPath) {
  let walFd = null;
  let flushing = false;
  let unflushed = [];
  function flushWal() {
    const covered = unflushed;
    unflushed = [];
    flushing = true;
    walFd ??= openSync(`${dbPath}-wal`, "r");
    fsync(walFd, (error) => {
      if (error) throw error;
      flushing = false;
      for (const answer of covered) answer();
      if (unflushed.length > 0) flushWal();
    });
  }
  return (answer) => {
    unflushed.push(answer);
    if (!flushing) flushWal();
  };
}
