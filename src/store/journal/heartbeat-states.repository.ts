import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import {alertAfter, NEW_HEARTBEAT, type HeartbeatState, type HeartbeatStatus} from "../../domain/heartbeat.js";
import {isoTimestamp} from "../../lib/clock.js";

/** A heartbeat's run-time state plus the down page a good ping will resolve. */
export interface StoredHeartbeatState extends HeartbeatState {
  notification_id: string | null;
}

interface Row {
  name: string;
  status: HeartbeatStatus;
  last_ping_at: string | null;
  last_start_at: string | null;
  expected_at: string | null;
  down_at: string | null;
  notification_id: string | null;
}

const SQL = {
  get: `SELECT * FROM heartbeat_states WHERE name = ?`,
  save: `INSERT INTO heartbeat_states (name, status, last_ping_at, last_start_at, expected_at, down_at, alert_after, notification_id, updated_at)
    VALUES (@name, @status, @last_ping_at, @last_start_at, @expected_at, @down_at, @alert_after, @notification_id, @updated_at)
    ON CONFLICT(name) DO UPDATE SET status = excluded.status, last_ping_at = excluded.last_ping_at, last_start_at = excluded.last_start_at,
      expected_at = excluded.expected_at, down_at = excluded.down_at, alert_after = excluded.alert_after,
      notification_id = excluded.notification_id, updated_at = excluded.updated_at`,
  remove: `DELETE FROM heartbeat_states WHERE name = ?`,
  due: `SELECT name FROM heartbeat_states WHERE alert_after IS NOT NULL AND alert_after <= ? ORDER BY alert_after LIMIT ?`,
  earliest: `SELECT MIN(alert_after) AS at FROM heartbeat_states WHERE alert_after IS NOT NULL`,
  watched: `SELECT * FROM heartbeat_states WHERE down_at IS NOT NULL`,
  pagedWith: `SELECT name FROM heartbeat_states WHERE notification_id = ?`
};

const toMs = (iso: string | null) => (iso === null ? null : Date.parse(iso));
const toIso = (ms: number | null) => (ms === null ? null : isoTimestamp(ms));

function fromRow(row: Row): StoredHeartbeatState {
  return {
    status: row.status,
    last_ping_at: toMs(row.last_ping_at),
    last_start_at: toMs(row.last_start_at),
    expected_at: toMs(row.expected_at),
    down_at: toMs(row.down_at),
    paged: row.notification_id !== null,
    notification_id: row.notification_id
  };
}

/** Heartbeats' run-time state in the journal. Writes must run inside `journal.write()`. */
export class HeartbeatStatesRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** The stored state; a heartbeat with no row yet (just created) is new. */
  get(name: string): StoredHeartbeatState {
    const row = this.statements.get.get(name) as Row | undefined;
    return row ? fromRow(row) : {...NEW_HEARTBEAT, notification_id: null};
  }

  /** The heartbeat whose open page is this notification, or null for any other alert. */
  pagedWith(notificationId: string): string | null {
    return (this.statements.pagedWith.pluck().get(notificationId) as string | undefined) ?? null;
  }

  /** Heartbeats with a deadline, for the fresh grace after a restart. */
  watched(): Array<{name: string; state: StoredHeartbeatState}> {
    return (this.statements.watched.all() as Row[]).map((row) => ({name: row.name, state: fromRow(row)}));
  }

  save(name: string, state: StoredHeartbeatState, nowIso: string): void {
    this.statements.save.run({
      name,
      status: state.status,
      last_ping_at: toIso(state.last_ping_at),
      last_start_at: toIso(state.last_start_at),
      expected_at: toIso(state.expected_at),
      down_at: toIso(state.down_at),
      alert_after: toIso(alertAfter(state)),
      notification_id: state.notification_id,
      updated_at: nowIso
    });
  }

  remove(name: string): void {
    this.statements.remove.run(name);
  }

  /** Names whose sweep time has come, earliest first. */
  due(nowIso: string, limit: number): string[] {
    return (this.statements.due.all(nowIso, limit) as Array<{name: string}>).map((row) => row.name);
  }

  /** The earliest stored sweep time, ms, or null when no heartbeat is waiting for one. */
  earliestDue(): number | null {
    return toMs((this.statements.earliest.get() as {at: string | null}).at);
  }
}
