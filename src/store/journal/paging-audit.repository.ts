import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {Undeliverable} from "./escalations.repository.js";
import type {NotificationStatus, Priority} from "../../domain/vocabulary.js";

// The auditor's own reading of the journal (docs/reliability.md, "The paging auditor"). It shares
// no query with the planner or the runner: what counts as carried, as a recorded reason and as
// the moment paging was due is stated here again, from the rows alone.
const SQL = {
  // Both read an index alone (notifications_status; escalations_waiting, partial): a pass over
  // thousands of open alerts costs two index scans, not a look at each alert's rows.
  open: `SELECT id FROM notifications WHERE status IN ('queued', 'notifying', 'exhausted')`,
  loud: `SELECT notification_id FROM escalations WHERE waiting_for IS NOT NULL`,
  // The alerts named, each with whether an attempt ever reached a channel (skips and quiet-hours
  // deferrals are records, not pages) and, for those with none, the facts that may excuse them.
  examine: `SELECT n.id, n.status, n.priority, n.created_at, e.id IS NOT NULL AS has_chain,
      e.grouped_with IS NOT NULL AS grouped,
      EXISTS (SELECT 1 FROM attempts a WHERE a.notification_id = n.id AND a.outcome NOT IN ('skipped', 'deferred')) AS paged,
      (SELECT MAX(v.created_at) FROM events v WHERE v.notification_id = n.id AND v.type = 'notification.released') AS released_at,
      (SELECT MAX(substr(a.error, 19)) FROM attempts a
        WHERE a.notification_id = n.id AND a.outcome = 'deferred' AND a.error LIKE 'quiet hours until %'
        AND EXISTS (SELECT 1 FROM json_each(e.policy, '$.members') m
          WHERE json_extract(m.value, '$.recipient_uuid') = a.recipient_uuid
          AND json_type(m.value, '$.quiet_hours') = 'object'
          AND NOT EXISTS (SELECT 1 FROM json_each(m.value, '$.quiet_hours.allow_priorities') p WHERE p.value = n.priority))
      ) AS deferred_until
    FROM notifications n LEFT JOIN escalations e ON e.notification_id = n.id
    WHERE n.id IN (SELECT value FROM json_each(@ids)) AND n.status IN ('queued', 'notifying', 'exhausted')`,
  findings: `SELECT notification_id, reason, found_at FROM paging_audit ORDER BY found_at, notification_id`,
  insert: `INSERT OR IGNORE INTO paging_audit (notification_id, reason, found_at) VALUES (?, ?, ?)`,
  remove: `DELETE FROM paging_audit WHERE notification_id = ?`
};

/** An alert nobody closed or held, as the journal has it: what the auditor's question is asked of. */
export interface AuditSuspect {
  id: string;
  status: Extract<NotificationStatus, "queued" | "notifying" | "exhausted">;
  priority: Priority;
  created_at: string;
  /** Whether an escalation chain was recorded for it at all. */
  has_chain: boolean;
  /** It waits behind another alert's page (a storm). */
  grouped: boolean;
  /** An attempt reached a channel: for good, since a carried attempt never becomes a skip. */
  paged: boolean;
  /** When a maintenance window last released it (paging was due from then), or null. */
  released_at: string | null;
  /** The latest end of a quiet-hours deferral of a person whose quiet hours hold this priority, or null. */
  deferred_until: string | null;
}

/** An alert the auditor made undeliverable, and why. */
export interface AuditFinding {
  notification_id: string;
  reason: string;
  found_at: string;
}

/** The paging auditor's reads of the journal and its findings table. */
export class PagingAuditRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  /** Every alert nobody acknowledged, resolved or held. */
  open(): string[] {
    return this.statements.open.pluck().all() as string[];
  }

  /** The alerts whose chain records a wait for a channel: already undeliverable, already loud. */
  loud(): string[] {
    return this.statements.loud.pluck().all() as string[];
  }

  /** The alerts named that are still open, each with whether it was paged and what may excuse it if not. */
  examine(ids: string[]): AuditSuspect[] {
    if (ids.length === 0) return [];
    const rows = this.statements.examine.all({ids: JSON.stringify(ids)}) as Array<
      Omit<AuditSuspect, "has_chain" | "grouped" | "paged"> & {has_chain: number; grouped: number; paged: number}
    >;
    return rows.map((row) => ({
      ...row,
      has_chain: row.has_chain === 1,
      grouped: row.grouped === 1,
      paged: row.paged === 1
    }));
  }

  findings(): AuditFinding[] {
    return this.statements.findings.all() as AuditFinding[];
  }

  record(finding: AuditFinding): boolean {
    return this.statements.insert.run(finding.notification_id, finding.reason, finding.found_at).changes === 1;
  }

  remove(notificationId: string): void {
    this.statements.remove.run(notificationId);
  }
}

/** What the loud signals count as undeliverable: the runner's waits, and the auditor's findings (channel null). */
export interface LoudUndeliverable {
  count: number;
  reasons: Undeliverable["reasons"];
}

/**
 * What the loud signals (/readyz, the gauge, the banner, doctor, self-monitoring) count: the
 * chains the runner records as waiting for a channel, and the alerts the auditor found, which
 * name no channel. The two never overlap: a recorded wait is a reason the auditor accepts.
 */
export function withAuditFindings(undeliverable: Undeliverable, findings: AuditFinding[]): LoudUndeliverable {
  if (findings.length === 0) return undeliverable;
  const byReason = new Map<string, number>();
  for (const finding of findings) byReason.set(finding.reason, (byReason.get(finding.reason) ?? 0) + 1);
  return {
    count: undeliverable.count + findings.length,
    reasons: [
      ...undeliverable.reasons,
      ...[...byReason].map(([reason, notifications]) => ({channel: null, reason, notifications, reached: 0}))
    ]
  };
}
