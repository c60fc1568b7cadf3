import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {Actor} from "../../domain/actor.js";
import type {MaintenanceScope, MaintenanceWindow} from "../../domain/maintenance.js";
import {SqlFilter} from "./sql-filter.js";

const SQL = {
  insert: `INSERT INTO maintenance_windows (uuid, starts_at, ends_at, reason, scope, created_at, created_by, released_at)
    VALUES (@uuid, @starts_at, @ends_at, @reason, @scope, @created_at, @created_by, NULL)`,
  get: `SELECT * FROM maintenance_windows WHERE uuid = ?`,
  // Windows that may hold an alert at @now: begun, and not yet released (an ended one still unreleased holds nothing new, but is cheap to skip).
  activeAt: `SELECT * FROM maintenance_windows WHERE released_at IS NULL AND starts_at <= @now AND ends_at > @now`,
  endedUnreleased: `SELECT * FROM maintenance_windows WHERE released_at IS NULL AND ends_at <= ? ORDER BY ends_at LIMIT ?`,
  earliestEnd: `SELECT MIN(ends_at) AS at FROM maintenance_windows WHERE released_at IS NULL`,
  endNow: `UPDATE maintenance_windows SET ends_at = @now WHERE uuid = @uuid AND ends_at > @now`,
  markReleased: `UPDATE maintenance_windows SET released_at = @now WHERE uuid = @uuid AND released_at IS NULL`,
  remove: `DELETE FROM maintenance_windows WHERE uuid = ?`,
  suppress: `INSERT INTO suppressions (notification_id, window_uuid, integration_id, heartbeat) VALUES (?, ?, ?, ?)`,
  // Still held: not acknowledged or resolved since (those leave the suppressed state).
  held: `SELECT s.notification_id, s.integration_id, s.heartbeat, n.target_uuid, n.source FROM suppressions s
    JOIN notifications n ON n.id = s.notification_id WHERE s.window_uuid = ? AND n.status = 'suppressed' ORDER BY n.id`,
  moveTo: `UPDATE suppressions SET window_uuid = ? WHERE notification_id = ?`,
  suppressionOf: `SELECT window_uuid FROM suppressions WHERE notification_id = ?`
};

type Row = Omit<MaintenanceWindow, keyof MaintenanceScope | "created_by"> & {scope: string; created_by: string};

function fromRow(row: Row): MaintenanceWindow {
  const {scope, created_by, ...rest} = row;
  return {...rest, ...(JSON.parse(scope) as MaintenanceScope), created_by: JSON.parse(created_by) as Actor};
}

/** An alert a window holds, with where it came from: what its release is decided on. */
export interface HeldAlert {
  notification_id: string;
  integration_id: string | null;
  heartbeat: string | null;
  target_uuid: string;
  source: string | null;
}

export interface WindowFilter {
  /** Only windows whose end is after this instant (active and upcoming), or at or before it (ended). */
  ending?: {after: string} | {atOrBefore: string};
  /** Only windows starting after this instant (upcoming) or at or before it (begun). */
  starting?: {after: string} | {atOrBefore: string};
  limit: number;
}

/** Maintenance windows and the alerts they hold. Writes must run inside `journal.write()`. */
export class MaintenanceWindowsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(private readonly journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  insert(window: MaintenanceWindow): void {
    const {targets, sources, integrations, heartbeats, created_by, released_at: _released, ...rest} = window;
    this.statements.insert.run({
      ...rest,
      scope: JSON.stringify({targets, sources, integrations, heartbeats}),
      created_by: JSON.stringify(created_by)
    });
  }

  get(uuid: string): MaintenanceWindow | null {
    const row = this.statements.get.get(uuid) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Windows active at `nowIso`: asked on every send, from an index of the few unreleased windows. */
  activeAt(nowIso: string): MaintenanceWindow[] {
    return (this.statements.activeAt.all({now: nowIso}) as Row[]).map(fromRow);
  }

  /** Windows over at `nowIso` whose held alerts were not yet released, earliest end first. */
  endedUnreleased(nowIso: string, limit: number): MaintenanceWindow[] {
    return (this.statements.endedUnreleased.all(nowIso, limit) as Row[]).map(fromRow);
  }

  /** The earliest end of a window not yet released: when the releaser must next wake. */
  earliestEnd(): string | null {
    return (this.statements.earliestEnd.get() as {at: string | null}).at;
  }

  /** Ends a window at `nowIso`; false when it had ended already. */
  endNow(uuid: string, nowIso: string): boolean {
    return this.statements.endNow.run({uuid, now: nowIso}).changes > 0;
  }

  /** Records that the window's end was handled; false when another pass did it first. */
  markReleased(uuid: string, nowIso: string): boolean {
    return this.statements.markReleased.run({uuid, now: nowIso}).changes > 0;
  }

  remove(uuid: string): void {
    this.statements.remove.run(uuid);
  }

  suppress(notificationId: string, windowUuid: string, integrationId: string | null, heartbeat: string | null): void {
    this.statements.suppress.run(notificationId, windowUuid, integrationId, heartbeat);
  }

  /** The alerts the window holds that are still suppressed. */
  held(windowUuid: string): HeldAlert[] {
    return this.statements.held.all(windowUuid) as HeldAlert[];
  }

  /** Another window, still active, holds the alert from now on. */
  moveTo(notificationId: string, windowUuid: string): void {
    this.statements.moveTo.run(windowUuid, notificationId);
  }

  /** The window that held (or holds) a suppressed alert, or null. */
  suppressionOf(notificationId: string): string | null {
    return (
      (this.statements.suppressionOf.get(notificationId) as {window_uuid: string} | undefined)?.window_uuid ?? null
    );
  }

  /** Newest first by start; cursor is the uuid of the last item of the previous page. */
  list(filter: WindowFilter): MaintenanceWindow[] {
    const sql = new SqlFilter();
    if (filter.ending && "after" in filter.ending) sql.add("ends_at > ?", filter.ending.after);
    if (filter.ending && "atOrBefore" in filter.ending) sql.add("ends_at <= ?", filter.ending.atOrBefore);
    if (filter.starting && "after" in filter.starting) sql.add("starts_at > ?", filter.starting.after);
    if (filter.starting && "atOrBefore" in filter.starting) sql.add("starts_at <= ?", filter.starting.atOrBefore);
    const rows = this.journal.db
      .prepare(`SELECT * FROM maintenance_windows ${sql.where} ORDER BY starts_at DESC, uuid DESC LIMIT ?`)
      .all(...sql.params, filter.limit) as Row[];
    return rows.map(fromRow);
  }
}
