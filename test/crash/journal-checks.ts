import {readFileSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {settled, type Ledger} from "./ledger.js";
import type {LoadTargets} from "./load-driver.js";

/** The event types the suite's webhook subscription receives: each of those events needs one outbox row. */
export const SUBSCRIBED_EVENTS = ["escalation.started", "notification.acknowledged", "notification.resolved"] as const;

/** What was in flight or due when the gateway died, for the checks after the restart. */
export interface KillSnapshot {
  killedAtIso: string;
  /** Attempts started and not finished: their outcome is unknown and they must not run again. */
  pendingAttempts: string[];
  /** Webhook deliveries started and not finished. */
  unfinishedDeliveries: number[];
  /** Running chains whose stored wake-up had come: each must get its step after the restart. */
  dueChains: Array<{notification_id: string; step: number}>;
}

/** Opens the journal read-only: safe beside a running gateway (WAL) and after a dead one. */
export function openJournal(dataDir: string): Database.Database {
  return new Database(join(dataDir, "journal.sqlite"), {readonly: true, fileMustExist: true});
}

const column = <T>(db: Database.Database, sql: string, ...params: unknown[]): T[] =>
  db
    .prepare(sql)
    .pluck()
    .all(...params) as T[];

/**
 * Everything the gateway confirmed must be in the files it left, read while it is dead: the
 * journal is intact, every answered alert has its row, audit entry, event and outbox row (and
 * its idempotency record when it had a key), every answered close holds and stopped its chain,
 * no step ran twice, and the config file parses and has every answered admin change.
 */
export function checkAfterKill(
  dataDir: string,
  ledger: Ledger,
  targets: LoadTargets,
  killedAtMs: number
): {problems: string[]; snapshot: KillSnapshot} {
  const problems: string[] = [];
  const db = openJournal(dataDir);
  try {
    const integrity = column<string>(db, "PRAGMA integrity_check");
    if (integrity.join() !== "ok") problems.push(`integrity_check: ${integrity.join("; ")}`);
    const foreignKeys = db.prepare("PRAGMA foreign_key_check").all();
    if (foreignKeys.length) problems.push(`foreign_key_check: ${JSON.stringify(foreignKeys.slice(0, 5))}`);
    problems.push(
      ...answeredAlerts(db, ledger),
      ...answeredCloses(db, ledger),
      ...escalationConsistency(db),
      ...adminAudit(db, ledger)
    );
    problems.push(...configFile(dataDir, ledger, targets));
    const killedAtIso = new Date(killedAtMs).toISOString();
    const snapshot: KillSnapshot = {
      killedAtIso,
      pendingAttempts: column<string>(db, "SELECT id FROM attempts WHERE finished_at IS NULL"),
      unfinishedDeliveries: column<number>(db, "SELECT id FROM webhook_deliveries WHERE finished_at IS NULL"),
      dueChains: db
        .prepare("SELECT notification_id, step FROM escalations WHERE state = 'running' AND next_step_at <= ?")
        .all(killedAtIso) as KillSnapshot["dueChains"]
    };
    return {problems, snapshot};
  } finally {
    db.close();
  }
}

function answeredAlerts(db: Database.Database, ledger: Ledger): string[] {
  const problems: string[] = [];
  const notifications = new Set(column<string>(db, "SELECT id FROM notifications"));
  const audited = new Set(column<string>(db, "SELECT subject_id FROM audit WHERE action = 'notification.accepted'"));
  const started = new Set(column<string>(db, "SELECT notification_id FROM events WHERE type = 'escalation.started'"));
  const idempotency = new Map(
    (
      db.prepare("SELECT idempotency_key AS key, response_body AS body FROM idempotency").all() as Array<{
        key: string;
        body: string;
      }>
    ).map((row) => [row.key, row.body])
  );
  for (const sent of ledger.sends.values()) {
    if (!notifications.has(sent.id)) problems.push(`answered alert ${sent.id} is not in the journal`);
    if (!audited.has(sent.id)) problems.push(`answered alert ${sent.id} has no notification.accepted audit entry`);
    if (!started.has(sent.id)) problems.push(`answered alert ${sent.id} has no escalation.started event`);
    if (sent.idempotency) {
      const body = idempotency.get(sent.idempotency.key);
      if (!body || JSON.parse(body).notification_uuid !== sent.id)
        problems.push(`answered alert ${sent.id}: Idempotency-Key ${sent.idempotency.key} is not stored with it`);
    }
  }
  // One outbox row per event the subscription takes, none for the others (every event of the run
  // was emitted after the subscription was created).
  const subscribed = SUBSCRIBED_EVENTS.map((type) => `'${type}'`).join(", ");
  const wrongOutbox = db
    .prepare(
      `SELECT e.id, e.type, COUNT(o.seq) AS rows FROM events e LEFT JOIN outbox o ON o.event_id = e.id
       GROUP BY e.id HAVING rows != CASE WHEN e.type IN (${subscribed}) THEN 1 ELSE 0 END LIMIT 5`
    )
    .all();
  if (wrongOutbox.length) problems.push(`events with the wrong number of outbox rows: ${JSON.stringify(wrongOutbox)}`);
  return problems;
}

function answeredCloses(db: Database.Database, ledger: Ledger): string[] {
  const problems: string[] = [];
  const read = db.prepare(
    `SELECT n.status, COALESCE(n.acknowledged_at, n.resolved_at) AS closed_at, e.state,
       (SELECT COUNT(*) FROM attempts a WHERE a.notification_id = n.id AND a.started_at > COALESCE(n.acknowledged_at, n.resolved_at)) AS attempts_after,
       (SELECT COUNT(*) FROM audit WHERE subject_id = n.id AND action = 'notification.' || n.status) AS audited,
       (SELECT COUNT(*) FROM events WHERE notification_id = n.id AND type = 'notification.' || n.status) AS events
     FROM notifications n JOIN escalations e ON e.notification_id = n.id WHERE n.id = ?`
  );
  for (const [id, as] of ledger.closed) {
    const row = read.get(id) as
      | {
          status: string;
          closed_at: string | null;
          state: string;
          attempts_after: number;
          audited: number;
          events: number;
        }
      | undefined;
    if (!row) {
      problems.push(`answered ${as} alert ${id} is not in the journal`);
      continue;
    }
    if (row.status !== as) problems.push(`answered ${as} alert ${id} is ${row.status} in the journal`);
    if (row.state === "running") problems.push(`${as} alert ${id} still has a running escalation`);
    if (row.attempts_after > 0)
      problems.push(`${as} alert ${id} has ${row.attempts_after} attempts started after ${row.closed_at}`);
    if (row.audited !== 1 || row.events !== 1)
      problems.push(
        `${as} alert ${id}: ${row.audited} audit entries and ${row.events} events for it (1 each expected)`
      );
  }
  return problems;
}

/**
 * A step runs once: never two attempts for the same notification, step, recipient and channel.
 * Not counted: a skip or deferral (the step is carried later) and a failure other than an
 * interruption (a step whose channel failed under it is tried again once the channel works).
 */
export function stepsRunTwice(db: Database.Database): string[] {
  const twice = db
    .prepare(
      `SELECT notification_id, step, recipient_uuid, channel, COUNT(*) AS n FROM attempts
    WHERE outcome NOT IN ('skipped', 'deferred') AND NOT (outcome = 'failed' AND error NOT LIKE 'interrupted%')
    GROUP BY notification_id, step, recipient_uuid, channel HAVING n > 1 LIMIT 5`
    )
    .all();
  return twice.length
    ? [`steps that ran twice (same notification, step, recipient, channel): ${JSON.stringify(twice)}`]
    : [];
}

function escalationConsistency(db: Database.Database): string[] {
  const problems = stepsRunTwice(db);
  const orphans = column<string>(
    db,
    "SELECT n.id FROM notifications n LEFT JOIN escalations e ON e.notification_id = n.id WHERE e.id IS NULL LIMIT 5"
  );
  if (orphans.length) problems.push(`notifications without an escalation row: ${orphans.join(", ")}`);
  const stillRunning = column<string>(
    db,
    "SELECT n.id FROM notifications n JOIN escalations e ON e.notification_id = n.id WHERE n.status NOT IN ('queued', 'notifying') AND e.state = 'running' LIMIT 5"
  );
  if (stillRunning.length)
    problems.push(`closed notifications whose escalation still runs: ${stillRunning.join(", ")}`);
  return problems;
}

function adminAudit(db: Database.Database, ledger: Ledger): string[] {
  const problems: string[] = [];
  const audited = new Set(
    db
      .prepare("SELECT action || ' ' || subject_id FROM audit WHERE subject_type IN ('recipient', 'api_key')")
      .pluck()
      .all() as string[]
  );
  const expect = (action: string, id: string) => {
    if (!audited.has(`${action} ${id}`)) problems.push(`answered ${action} of ${id} has no audit entry`);
  };
  for (const [uuid, state] of settled(ledger.recipients, ledger.adminInDoubt)) {
    expect("recipient.created", uuid);
    if (state === "deleted") expect("recipient.deleted", uuid);
  }
  for (const [id, key] of settled(ledger.keys, ledger.adminInDoubt)) {
    expect("api_key.created", id);
    if (key.state === "revoked") expect("api_key.revoked", id);
  }
  return problems;
}

function configFile(dataDir: string, ledger: Ledger, targets: LoadTargets): string[] {
  const path = join(dataDir, "config.json");
  let config: {
    recipients: Array<{uuid: string}>;
    groups: Array<{uuid: string}>;
    api_keys: Array<{id: string; revoked_at: string | null}>;
  };
  try {
    config = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return [`${path} does not parse: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  const recipients = new Set(config.recipients.map((recipient) => recipient.uuid));
  const groups = new Set(config.groups.map((group) => group.uuid));
  const keys = new Map(config.api_keys.map((key) => [key.id, key]));
  for (const uuid of targets.recipients)
    if (!recipients.has(uuid)) problems.push(`target recipient ${uuid} is missing from config.json`);
  for (const uuid of targets.groups)
    if (!groups.has(uuid)) problems.push(`target group ${uuid} is missing from config.json`);
  for (const [uuid, state] of settled(ledger.recipients, ledger.adminInDoubt)) {
    if (recipients.has(uuid) !== (state === "present"))
      problems.push(
        `answered recipient ${uuid} should be ${state} but config.json ${recipients.has(uuid) ? "has" : "lacks"} it`
      );
  }
  for (const [id, key] of settled(ledger.keys, ledger.adminInDoubt)) {
    const stored = keys.get(id);
    if (!stored) problems.push(`answered key ${id} is missing from config.json`);
    else if ((stored.revoked_at !== null) !== (key.state === "revoked"))
      problems.push(`answered key ${id} should be ${key.state} in config.json`);
  }
  return problems;
}
