import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {RetentionRepository} from "../../store/journal/retention.repository.js";

export interface RetentionDays {
  /** Closed notifications older than this go; 0 keeps them all. */
  notifications_days: number;
  /** Audit entries, and incoming SMS acted on, older than this go; 0 keeps them all. */
  audit_days: number;
}

const DAY_MS = 86_400_000;
// Small transactions: the pruner shares the journal with live traffic and must not hold it long.
const BATCH = 500;

/** What RetentionService works with, by name. */
export interface RetentionDeps {
  journal: Journal;
  retention: RetentionRepository;
  days: RetentionDays;
  clock: Clock;
  logger: Logger;
}

/**
 * Retention: deletes notifications closed (acknowledged, resolved, exhausted) longer ago than
 * the configured days, with their attempts, escalation and events, old audit entries and old
 * incoming SMS that were acted on. An
 * open notification is never deleted, nor one whose webhook events still wait to be delivered.
 */
export class RetentionService {
  constructor(private readonly deps: RetentionDeps) {
    for (const [name, value] of Object.entries(deps.days)) {
      if (!Number.isFinite(value) || value < 0)
        throw new Error(`retention.${name}: must be 0 (keep all) or a positive number of days, got ${value}`);
    }
  }

  /** One pass; returns how many notifications, audit entries and incoming SMS were deleted. */
  async prune(): Promise<{notifications: number; audit: number; incoming_sms: number}> {
    const nowMs = this.deps.clock.now();
    const deleted = {notifications: 0, audit: 0, incoming_sms: 0};
    if (this.deps.days.notifications_days > 0) {
      const cutoff = isoTimestamp(nowMs - this.deps.days.notifications_days * DAY_MS);
      for (let batch = BATCH; batch === BATCH;) {
        batch = await this.deps.journal.write(() => {
          const ids = this.deps.retention.prunableNotifications(cutoff, BATCH);
          if (ids.length) this.deps.retention.deleteNotifications(ids);
          return ids.length;
        });
        deleted.notifications += batch;
      }
    }
    if (this.deps.days.audit_days > 0) {
      const cutoff = isoTimestamp(nowMs - this.deps.days.audit_days * DAY_MS);
      for (let batch = BATCH; batch === BATCH;) {
        batch = await this.deps.journal.write(() => this.deps.retention.deleteAudit(cutoff, BATCH));
        deleted.audit += batch;
      }
      // What phones sent is a record like the audit log, and goes after the same period.
      for (let batch = BATCH; batch === BATCH;) {
        batch = await this.deps.journal.write(() => this.deps.retention.deleteHandledSms(cutoff, BATCH));
        deleted.incoming_sms += batch;
      }
    }
    if (deleted.notifications || deleted.audit || deleted.incoming_sms)
      this.deps.logger.info("retention pruned the journal", deleted);
    return deleted;
  }
}
