import {PRIORITIES, type Priority} from "../domain/vocabulary.js";
import type {EscalationRecord} from "../domain/notification.js";
import type {EscalationsRepository} from "../store/journal/escalations.repository.js";
import type {Journal} from "../store/journal/journal.js";

/** The chain a storm's newcomers join: its row (with its next step still ahead) and its urgency. */
export interface Anchor {
  row: EscalationRecord & {next_step_at: string};
  priority: Priority;
}

/** A paging chain as read in one transaction, with what says whether the read is still current. */
interface CachedRead {
  notificationId: string;
  transaction: number;
  updates: number;
  /** The chain as an anchor, if it has a step left to share; joinable until that step is due. */
  anchor: Anchor | null;
  nextStepMs: number;
}

/**
 * Alert storms: a new chain whose target is already being paged by another open chain does not
 * page at once; it waits for that chain's next step and takes up its own plan at that step, in
 * the same pass (one delivery when they share a channel and contact), and from then on their
 * steps stay aligned: one call per step window for the whole storm, as an incident groups its
 * alerts. Grouping never takes a page away: the newcomer runs the steps it skipped ahead of
 * after the others, a grouped contact counting for every alert it names. A chain more urgent than the one being paged never
 * waits; if the other chain closes first, the waiting one goes on at once
 * (`EscalationsRepository.stop`).
 *
 * A newcomer joins when it is accepted, in the send's own transaction, so a storm costs the
 * runner nothing until the shared step; the runner still groups a chain that becomes due while
 * another pages its target (accepted before that chain paged, or after a restart).
 */
export class StormGrouping {
  /**
   * Per target, the chain whose page a storm's newcomers join. In memory: after a restart the
   * next chain to page becomes it (at most one extra call); chains already grouped are stored.
   */
  private readonly pagingChains = new Map<string, string>();
  /** Per target, the paging chain's last read: every newcomer of a storm asks about the same chain. */
  private readonly reads = new Map<string, CachedRead>();

  constructor(
    private readonly journal: Journal,
    private readonly escalations: EscalationsRepository
  ) {}

  /**
   * The chain currently paging this target, if a newcomer can still join it: running, its next
   * step ahead and still to come (a chain only waiting to run out has no step left to share).
   * Reads the journal: call inside a journal transaction.
   */
  pagingChain(targetUuid: string, nowMs: number): Anchor | null {
    const read = this.read(targetUuid);
    return read && read.nextStepMs > nowMs ? read.anchor : null;
  }

  /**
   * The target's paging chain as the journal has it now. A read made earlier in the same
   * transaction is reused while no chain has been updated since: a storm's newcomers join
   * without changing the chain they join.
   */
  private read(targetUuid: string): CachedRead | null {
    const notificationId = this.pagingChains.get(targetUuid);
    if (!notificationId) return null;
    const transaction = this.journal.transactionNumber;
    const updates = this.escalations.updates;
    const cached = this.reads.get(targetUuid);
    if (cached && cached.notificationId === notificationId && cached.transaction === transaction && cached.updates === updates) return cached;
    const chain = this.escalations.anchorCandidate(notificationId);
    const read: CachedRead = {notificationId, transaction, updates, anchor: null, nextStepMs: Number.NEGATIVE_INFINITY};
    // A chain waiting for a channel pages nobody: a newcomer waiting behind it would wait for nothing.
    const sharesAStep = chain !== null && chain.state === "running" && chain.waiting_for === null && chain.step < chain.steps_total;
    if (chain !== null && sharesAStep && chain.grouped_with === null && chain.next_step_at !== null) {
      const {priority, ...row} = chain;
      read.anchor = {row: row as Anchor["row"], priority};
      read.nextStepMs = Date.parse(chain.next_step_at);
    }
    this.reads.set(targetUuid, read);
    return read;
  }

  /** A chain may wait behind `anchor` unless it is more urgent: an urgent alert never waits. */
  static canJoin(anchor: Anchor, priority: Priority): boolean {
    return PRIORITIES.indexOf(priority) >= PRIORITIES.indexOf(anchor.priority);
  }

  /** A new chain as it is stored at acceptance: waiting behind the chain paging its target, if it may join it. */
  atAcceptance(chain: EscalationRecord, targetUuid: string, priority: Priority, nowMs: number): EscalationRecord {
    const anchor = this.pagingChain(targetUuid, nowMs);
    if (!anchor || !StormGrouping.canJoin(anchor, priority)) return chain;
    return {...chain, grouped_with: anchor.row.notification_id, next_step_at: anchor.row.next_step_at, progress: {...chain.progress, current: anchor.row.progress.current}};
  }

  /** A chain of this target has paged and none is joinable: it becomes the one newcomers join. */
  paged(targetUuid: string, notificationId: string): void {
    this.pagingChains.set(targetUuid, notificationId);
  }

  /** The chain closed, or its page did not reach the person: it is no page to join. */
  forget(notificationId: string): void {
    for (const [target, id] of this.pagingChains) {
      if (id !== notificationId) continue;
      this.pagingChains.delete(target);
      this.reads.delete(target);
    }
  }
}
