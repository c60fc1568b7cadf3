import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {NotificationRecord, RecoveredChange} from "../../domain/notification.js";
import type {Channel, NotificationStatus, Priority} from "../../domain/vocabulary.js";
import {SqlFilter} from "./sql-filter.js";

const COLUMNS = [
  "id",
  "status",
  "target_uuid",
  "target_kind",
  "message",
  "priority",
  "source",
  "dedup_key",
  "link",
  "service",
  "environment",
  "occurrences",
  "channels_planned",
  "escalation_chain_id",
  "created_at",
  "updated_at",
  "acknowledged_at",
  "acknowledged_by",
  "acknowledged_via",
  "ack_note",
  "resolved_at",
  "api_key_id"
] as const;

const SQL = {
  // Positional: binding 22 named parameters from an object cost a third more than the values in order.
  insert: `INSERT INTO notifications (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`,
  get: `SELECT * FROM notifications WHERE id = ?`,
  markRecovered: `INSERT INTO recovered_changes (notification_id, change, from_box, hand_over, recovered_at)
    VALUES (@notification_id, @change, @from_box, @hand_over, @recovered_at) ON CONFLICT DO NOTHING`,
  recovered: `SELECT change, from_box, hand_over, recovered_at FROM recovered_changes WHERE notification_id = ? ORDER BY recovered_at, change`,
  countRecovered: `SELECT COUNT(*) AS n FROM recovered_changes WHERE hand_over = ?`,
  openByDedup: `SELECT * FROM notifications WHERE target_uuid = ? AND dedup_key = ? AND status IN ('queued', 'notifying')`,
  bumpOccurrences: `UPDATE notifications SET occurrences = occurrences + 1, updated_at = ? WHERE id = ?`,
  retitle: `UPDATE notifications SET message = ?, updated_at = ? WHERE id = ?`,
  raisePriority: `UPDATE notifications SET priority = @priority, channels_planned = @channels_planned, updated_at = @updated_at WHERE id = @id`,
  saveState: `UPDATE notifications SET status = @status, updated_at = @updated_at, acknowledged_at = @acknowledged_at,
    acknowledged_by = @acknowledged_by, acknowledged_via = @acknowledged_via, ack_note = @ack_note, resolved_at = @resolved_at WHERE id = @id`,
  countOpenForTarget: `SELECT COUNT(*) AS n FROM notifications WHERE target_uuid = ? AND status IN ('queued', 'notifying')`,
  openIdsForTarget: `SELECT id FROM notifications WHERE target_uuid = ? AND status IN ('queued', 'notifying') ORDER BY id LIMIT ?`,
  // From the open notifications (few, indexed by status) to their attempts (indexed by notification).
  openSentTo: `SELECT n.*, MAX(a.started_at) AS last_sent_at FROM notifications n
    JOIN attempts a ON a.notification_id = n.id
    WHERE n.status IN ('queued', 'notifying') AND a.recipient_uuid = ?
      AND a.channel IN (SELECT value FROM json_each(?)) AND a.outcome NOT IN ('skipped', 'deferred')
    GROUP BY n.id ORDER BY last_sent_at DESC, n.id DESC LIMIT ?`
};

export interface NotificationFilter {
  status?: NotificationStatus;
  target_uuid?: string;
  priority?: Priority;
  /** Only ids strictly older than this one (the cursor). */
  before_id?: string;
  limit: number;
}

type Row = Omit<NotificationRecord, "channels_planned"> & {channels_planned: string};

function fromRow(row: Row | undefined): NotificationRecord | null {
  return row
    ? {...row, channels_planned: JSON.parse(row.channels_planned) as NotificationRecord["channels_planned"]}
    : null;
}

/** Notifications in the journal. Writes must run inside `journal.write()`. */
export class NotificationsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(private readonly journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  insert(record: NotificationRecord): void {
    this.statements.insert.run(
      ...COLUMNS.map((column) =>
        column === "channels_planned" ? JSON.stringify(record.channels_planned) : record[column]
      )
    );
  }

  get(id: string): NotificationRecord | null {
    return fromRow(this.statements.get.get(id) as Row | undefined);
  }

  /** Notes a change as recovered from a former active; false when it was noted before (a replayed hand-over). */
  markRecovered(id: string, change: RecoveredChange): boolean {
    return this.statements.markRecovered.run({notification_id: id, ...change}).changes === 1;
  }

  recovered(id: string): RecoveredChange[] {
    return this.statements.recovered.all(id) as RecoveredChange[];
  }

  countRecovered(handOver: string): number {
    return (this.statements.countRecovered.get(handOver) as {n: number}).n;
  }

  findOpenByDedup(targetUuid: string, dedupKey: string): NotificationRecord | null {
    return fromRow(this.statements.openByDedup.get(targetUuid, dedupKey) as Row | undefined);
  }

  bumpOccurrences(id: string, nowIso: string): void {
    this.statements.bumpOccurrences.run(nowIso, id);
  }

  /** The alert's text changed while it is open (a PLC point found chattering). */
  retitle(id: string, message: string, nowIso: string): void {
    this.statements.retitle.run(message, nowIso, id);
  }

  /** A merge raised the priority: the channels the re-planned chain will use change with it. */
  raisePriority(id: string, priority: Priority, channelsPlanned: Channel[], nowIso: string): void {
    this.statements.raisePriority.run({
      id,
      priority,
      channels_planned: JSON.stringify(channelsPlanned),
      updated_at: nowIso
    });
  }

  saveState(record: NotificationRecord): void {
    this.statements.saveState.run({
      id: record.id,
      status: record.status,
      updated_at: record.updated_at,
      acknowledged_at: record.acknowledged_at,
      acknowledged_by: record.acknowledged_by,
      acknowledged_via: record.acknowledged_via,
      ack_note: record.ack_note,
      resolved_at: record.resolved_at
    });
  }

  countOpenForTarget(targetUuid: string): number {
    return (this.statements.countOpenForTarget.get(targetUuid) as {n: number}).n;
  }

  /** The oldest `limit` open notifications paging this target. */
  openIdsForTarget(targetUuid: string, limit: number): string[] {
    return (this.statements.openIdsForTarget.all(targetUuid, limit) as Array<{id: string}>).map((row) => row.id);
  }

  /**
   * Open notifications that reached (or are reaching) this recipient on one of `channels`: an
   * attempt was made, not merely skipped or deferred. The most recently sent first.
   */
  openSentTo(recipientUuid: string, channels: readonly Channel[], limit: number): NotificationRecord[] {
    const rows = this.statements.openSentTo.all(recipientUuid, JSON.stringify(channels), limit) as Array<
      Row & {last_sent_at: string}
    >;
    return rows.map(({last_sent_at: _sent, ...row}) => fromRow(row) as NotificationRecord);
  }

  /** Newest first. Filters are optional; the query is built from fixed fragments only. */
  list(filter: NotificationFilter): NotificationRecord[] {
    const sql = new SqlFilter();
    if (filter.status) sql.add("status = ?", filter.status);
    if (filter.target_uuid) sql.add("target_uuid = ?", filter.target_uuid);
    if (filter.priority) sql.add("priority = ?", filter.priority);
    if (filter.before_id) sql.add("id < ?", filter.before_id);
    const rows = this.journal.db
      .prepare(`SELECT * FROM notifications ${sql.where} ORDER BY id DESC LIMIT ?`)
      .all(...sql.params, filter.limit) as Row[];
    return rows.map((row) => fromRow(row) as NotificationRecord);
  }
}
