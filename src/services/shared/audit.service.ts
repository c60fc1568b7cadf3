import type {Journal} from "../../store/journal/journal.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditEntry, AuditFilter, AuditRepository} from "../../store/journal/audit.repository.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";

/** What an entry is about; for an alert, also the source its sender named. */
export type AuditSubject = AuditEntry["subject"] & {source?: string | null};

/** The audit log: one shape for every kind of source and change. */
export class AuditService {
  constructor(
    private readonly journal: Journal,
    private readonly audit: AuditRepository,
    private readonly clock: Clock
  ) {}

  /** Appends inside the caller's journal transaction. */
  append(actor: Actor, action: string, subject: AuditSubject, detail: Record<string, unknown>): void {
    const {source = null, ...about} = subject;
    this.audit.append({at: isoTimestamp(this.clock.now()), actor, action, subject: about, source, detail});
  }

  /** Records an admin change made outside the journal (config store) in a commit of its own. */
  record(actor: Actor, action: string, subject: AuditEntry["subject"], detail: Record<string, unknown>): Promise<void> {
    return this.journal.write(() => this.append(actor, action, subject, detail));
  }

  list(filter: AuditFilter): AuditEntry[] {
    return this.journal.read(() => this.audit.list(filter));
  }
}
