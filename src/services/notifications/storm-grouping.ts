import {moreUrgent, type Priority} from "../../domain/vocabulary.js";
import type {EscalationRecord} from "../../domain/notification.js";
import type {PolicySnapshot} from "../../domain/policy.js";
import {stepSlots} from "../../domain/escalation/index.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {Journal} from "../../store/journal/journal.js";

/** The chain a storm's newcomers join: its row (with its next step still ahead) and its urgency. */
export interface Anchor {
  row: EscalationRecord & {next_step_at: string};
  priority: Priority;
  /** The recipient or group the anchor's alert was sent to. */
  target_uuid: string;
}

/** Where a newcomer waits: behind `anchor` until `atMs`, then from step `current` of its own plan on. */
export interface Join {
  atMs: number;
  current: number | null;
}

/** A paging chain as read in one transaction, with what says whether the read is still current. */
interface CachedRead {
  notificationId: string;
  epoch: number;
  updates: number;
  /** The chain as an anchor, if newcomers may wait behind it; joinable until its next wake-up. */
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
 * A newcomer never waits longer than `maxJoinDelayMs` from its acceptance to be named in a page
 * (`joinFor`): it joins the other chain's next step only when that is due within the limit.
 * Otherwise it pages at once, or, when the person was paged less than the limit ago, the limit
 * after that page, with every other newcomer of that interval: one page per limit for a storm
 * that trickles in, instead of one per alert, and none later than the limit.
 *
 * A newcomer joins when it is accepted, in the send's own transaction, so a storm costs the
 * runner nothing until the shared step; the runner still groups a chain that becomes due while
 * another pages its target (accepted before that chain's page committed, or after a restart).
 */
export class StormGrouping {
  /**
   * Per target, the chain whose page a storm's newcomers join. In memory: after a restart the
   * next chain to page becomes it (at most one extra call); chains already grouped are stored.
   * Changed only by `paged` and `forget`, which run after the commit of what they report.
   */
  private readonly pagingChains = new Map<string, string>();
  /**
   * Per target, the paging chain's last read: every newcomer of a storm asks about the same chain.
   * A cache, so a write function may fill it: an entry holds only while the journal's
   * `cacheEpoch` stays the same (a rolled-back run leaves none that a replay could use).
   */
  private readonly reads = new Map<string, CachedRead>();
  /**
   * Per target and person, when a chain last paged them (in memory: after a restart a newcomer
   * pages at once, at most one extra page). Changed only by `paged`, after the commit.
   */
  private readonly lastPagedMs = new Map<string, number>();

  constructor(
    private readonly journal: Journal,
    private readonly escalations: EscalationsRepository,
    private readonly maxJoinDelayMs: number
  ) {}

  /**
   * The chain currently paging this target or person, if a newcomer can still join it: running,
   * not waiting for a channel, its next wake-up still to come (the end of its current step's
   * window, even when that is only its end).
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
    const epoch = this.journal.cacheEpoch;
    const updates = this.escalations.updates;
    const cached = this.reads.get(targetUuid);
    if (cached && cached.notificationId === notificationId && cached.epoch === epoch && cached.updates === updates)
      return cached;
    const chain = this.escalations.anchorCandidate(notificationId);
    const read: CachedRead = {notificationId, epoch, updates, anchor: null, nextStepMs: Number.NEGATIVE_INFINITY};
    // A chain waiting for a channel pages nobody: a newcomer waiting behind it would wait for
    // nothing. One only waiting out its last step's window still holds the person's attention.
    if (
      chain !== null &&
      chain.state === "running" &&
      chain.waiting_for === null &&
      chain.grouped_with === null &&
      chain.next_step_at !== null
    ) {
      const {priority, target_uuid, ...row} = chain;
      read.anchor = {row: row as Anchor["row"], priority, target_uuid};
      read.nextStepMs = Date.parse(chain.next_step_at);
    }
    this.reads.set(targetUuid, read);
    return read;
  }

  /** The first joinable chain paging any of these targets or people. Call inside a journal transaction. */
  anchorAmong(keys: string[], nowMs: number): Anchor | null {
    for (const key of keys) {
      const anchor = this.pagingChain(key, nowMs);
      if (anchor) return anchor;
    }
    return null;
  }

  /** A chain may wait behind `anchor` unless it is more urgent: an urgent alert never waits. */
  static canJoin(anchor: Anchor, priority: Priority): boolean {
    return !moreUrgent(priority, anchor.priority);
  }

  /** A new chain as it is stored at acceptance: waiting behind the chain paging its target, if it may join it. */
  atAcceptance(chain: EscalationRecord, policy: PolicySnapshot, priority: Priority, nowMs: number): EscalationRecord {
    const targetUuid = policy.target.uuid;
    const keys = [targetUuid, ...stepSlots(policy, 0).map((slot) => slot.member.recipient_uuid)];
    const anchor = this.anchorAmong(keys, nowMs);
    if (!anchor || !StormGrouping.canJoin(anchor, priority)) return chain;
    const join = this.joinFor(anchor, targetUuid, keys, {acceptedMs: nowMs, nowMs});
    if (!join) return chain;
    return {
      ...chain,
      grouped_with: anchor.row.notification_id,
      next_step_at: new Date(join.atMs).toISOString(),
      progress: {...chain.progress, current: join.current}
    };
  }

  /**
   * Where a chain accepted at `acceptedMs`, whose page would reach `keys` (its target and the
   * people of its first step) while `anchor` pages them, waits; null: it pages now. It is named
   * in a page by `acceptedMs + maxJoinDelayMs` either way: at the anchor's next step, if that
   * is due by then; else, at the end of the limit that began with the last page to any of
   * `keys`, where every newcomer of that interval meets (its own plan from its first step).
   */
  joinFor(anchor: Anchor, targetUuid: string, keys: string[], at: {acceptedMs: number; nowMs: number}): Join | null {
    const deadlineMs = at.acceptedMs + this.maxJoinDelayMs;
    const anchorNextMs = Date.parse(anchor.row.next_step_at);
    if (anchorNextMs <= deadlineMs) return {atMs: anchorNextMs, current: StormGrouping.alignedStep(anchor, targetUuid)};
    const lastPagedMs = Math.max(...keys.map((key) => this.lastPagedMs.get(key) ?? Number.NEGATIVE_INFINITY));
    const atMs = Math.min(lastPagedMs + this.maxJoinDelayMs, deadlineMs);
    return atMs > at.nowMs ? {atMs, current: null} : null;
  }

  /**
   * Where a newcomer takes up its own plan: after the anchor's current step when both were sent
   * to the same target (the same plan, so the same channel at the same moment); from its first
   * step otherwise (a person paged through a group, an alert sent to them directly).
   */
  static alignedStep(anchor: Anchor, targetUuid: string): number | null {
    return anchor.target_uuid === targetUuid ? anchor.row.progress.current : null;
  }

  /**
   * A chain has paged: for its target and for each person it contacted that has no joinable
   * chain yet, or only a less urgent one, it becomes the one newcomers join. Keyed by person too, so an alert sent to
   * someone directly waits for the call they are getting through a group: one call per person
   * per step window. Reads the journal; call once the page has committed (an after-commit
   * effect of the write that recorded it), so a run rolled back leaves no trace here.
   */
  paged(keys: string[], notificationId: string, priority: Priority, nowMs: number): void {
    for (const key of keys) {
      this.lastPagedMs.set(key, Math.max(nowMs, this.lastPagedMs.get(key) ?? nowMs));
      const current = this.pagingChain(key, nowMs);
      // A more urgent chain that did not wait becomes the one to join: alerts as urgent as it
      // would otherwise each page on their own, since none may wait behind the less urgent one.
      if (!current || moreUrgent(priority, current.priority)) this.pagingChains.set(key, notificationId);
    }
  }

  /** The chain closed, or its page did not reach the person: it is no page to join. Call once that has committed. */
  forget(notificationId: string): void {
    for (const [target, id] of this.pagingChains) {
      if (id !== notificationId) continue;
      this.pagingChains.delete(target);
      this.reads.delete(target);
    }
  }
}
