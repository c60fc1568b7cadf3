import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {PeriodicTask} from "../../lib/periodic-task.js";
import type {Journal} from "../../store/journal/journal.js";
import type {AuditFinding, PagingAuditRepository} from "../../store/journal/paging-audit.repository.js";
import {auditVerdict} from "./audit-question.js";

/** How often the auditor asks its question; it also asks once as the gateway starts. */
export const AUDIT_INTERVAL_MS = 5000;

// Alert ids named in one log line; the rest are counted.
const LISTED_IDS = 20;
const countAlerts = (count: number) => (count === 1 ? "1 alert" : `${count} alerts`);
const listed = (ids: string[]) => ({
  notifications: ids.slice(0, LISTED_IDS),
  ...(ids.length > LISTED_IDS ? {more: ids.length - LISTED_IDS} : {})
});

/** What the auditor is built from: the journal, the clock, and a way to tell subscribers. It has no way to page anyone. */
export interface PagingAuditorDeps {
  journal: Journal;
  findings: PagingAuditRepository;
  clock: Clock;
  logger: Logger;
  /** paging.first_attempt_deadline_seconds. */
  deadlineSeconds: number;
  /** Records `notification.undeliverable` for the alert with the auditor's reason, inside the auditor's write. */
  announce(notificationId: string, reason: string, nowMs: number): void;
}

/**
 * The second line of defence of the paging guarantee (DESIGN rule 13, docs/reliability.md): a
 * periodic check that reads only the journal and the clock and shares no code with the planner or
 * the runner. Of every alert not acknowledged, resolved or held it asks: has a page been carried
 * within the deadline of acceptance, or does the journal record an allowed reason not to? An
 * alert that fails is recorded as a finding, which every loud signal counts, and announced once.
 * It never pages the people of the plant: it only raises the alarm.
 */
export class PagingAuditor {
  private readonly task: PeriodicTask;
  private started = false;
  private lastPassAt: number | null = null;
  private lastPassFailed = false;
  /** Open alerts the journal showed paged: the only memory the auditor keeps, rebuilt by its first pass. */
  private paged = new Set<string>();

  constructor(private readonly deps: PagingAuditorDeps) {
    this.task = new PeriodicTask("paging-auditor", AUDIT_INTERVAL_MS, () => this.pass(), deps.logger);
  }

  /** One pass, as the timer runs it: a failure is logged and shown on /readyz, never thrown. */
  async tick(): Promise<void> {
    await this.task.tick();
  }

  /**
   * The question asked of the journal as it is now, without recording anything (what a test checks
   * a state with). Alerts known to have been paged are not looked at again: an attempt that reached
   * a channel stays so, so after the first pass only new and unpaged alerts cost a look.
   */
  question(): Array<{notification_id: string; reason: string}> {
    const nowMs = this.deps.clock.now();
    const {journal, findings, deadlineSeconds} = this.deps;
    return journal.read(() => {
      const loud = new Set(findings.loud());
      // Rebuilt each pass from the open alerts, so closed ones are forgotten.
      const paged = new Set<string>();
      const unknown: string[] = [];
      for (const id of findings.open()) {
        if (this.paged.has(id)) paged.add(id);
        else if (!loud.has(id)) unknown.push(id);
      }
      const examined = findings.examine(unknown);
      for (const suspect of examined) if (suspect.paged) paged.add(suspect.id);
      this.paged = paged;
      return examined.flatMap((suspect) => {
        const reason = auditVerdict(suspect, nowMs, deadlineSeconds);
        return reason === null ? [] : [{notification_id: suspect.id, reason}];
      });
    });
  }

  /** Asks at once (the start-up pass: alerts left stuck by an earlier run are loud before the first interval), then every 5 s. */
  async start(): Promise<void> {
    this.started = true;
    const known = this.deps.journal.read(() => this.deps.findings.findings());
    if (known.length)
      this.deps.logger.error("paging auditor: alerts found undeliverable before this start are still open", {
        alerts: known.length,
        reasons: [...new Set(known.map((finding) => finding.reason))]
      });
    await this.tick();
    this.task.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.task.stop();
  }

  /** The alerts it has made undeliverable and not yet seen carried, closed or explained. */
  findings(): AuditFinding[] {
    return this.deps.journal.read(() => this.deps.findings.findings());
  }

  get health(): {running: boolean; next_wake_at: string | null; last_pass_failed: boolean} {
    return {
      running: this.started,
      next_wake_at: this.started && this.lastPassAt !== null ? isoTimestamp(this.lastPassAt + AUDIT_INTERVAL_MS) : null,
      last_pass_failed: this.lastPassFailed
    };
  }

  private async pass(): Promise<void> {
    try {
      await this.audit();
      this.lastPassFailed = false;
    } catch (error) {
      this.lastPassFailed = true;
      throw error;
    } finally {
      this.lastPassAt = this.deps.clock.now();
    }
  }

  private async audit(): Promise<void> {
    const {journal, findings, logger} = this.deps;
    const nowMs = this.deps.clock.now();
    const failing = new Map(this.question().map((entry) => [entry.notification_id, entry.reason]));
    const known = journal.read(() => findings.findings());
    const knownIds = new Set(known.map((finding) => finding.notification_id));
    const found = [...failing]
      .filter(([id]) => !knownIds.has(id))
      .map(([notification_id, reason]) => ({notification_id, reason, found_at: isoTimestamp(nowMs)}));
    const cleared = known.map((finding) => finding.notification_id).filter((id) => !failing.has(id));
    if (found.length === 0 && cleared.length === 0) return;
    await journal.write(() => {
      for (const finding of found) {
        if (findings.record(finding)) this.deps.announce(finding.notification_id, finding.reason, nowMs);
      }
      for (const id of cleared) findings.remove(id);
    });
    // One line per reason and pass, not per alert: a storm of findings must not drown the log.
    const byReason = new Map<string, string[]>();
    for (const finding of found) {
      const ids = byReason.get(finding.reason) ?? [];
      ids.push(finding.notification_id);
      byReason.set(finding.reason, ids);
    }
    // The reason starts "paging auditor: ", so the line says who found it.
    for (const [reason, ids] of byReason) logger.error(`${reason} (${countAlerts(ids.length)})`, listed(ids));
    if (cleared.length)
      logger.info(
        `paging auditor: ${countAlerts(cleared.length)} no longer undeliverable (paged, closed or explained)`,
        listed(cleared)
      );
  }
}
