import {advance, countSteps, type EscalationState} from "../../domain/escalation/index.js";
import {freshProgress, isOpen, type EscalationRecord, type NotificationRecord} from "../../domain/notification.js";
import type {PolicySnapshot} from "../../domain/policy.js";
import type {AckVia, Channel} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {WakeTimer} from "../../lib/wake-timer.js";
import {RepeatingPass} from "../../lib/repeating-pass.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {AttemptsRepository} from "../../store/journal/attempts.repository.js";
import type {ChannelRegistry} from "../../channels/channel-registry.js";
import {CONTACT_UNUSABLE, type ContactFailuresRepository} from "../../store/journal/contact-failures.repository.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import {ChannelQueue, type QueuedAttempt} from "./channel-queue.js";
import type {EventPublisher} from "../notifications/event-publisher.js";
import type {AuditService} from "../shared/audit.service.js";
import type {PagingPolicies} from "../recipients/paging-policies.js";
import {StormGrouping} from "../notifications/storm-grouping.js";
import {AttemptOutcomes} from "./attempt-outcomes.js";
import {reportWaiting} from "./waiting-report.js";
import {FireEffects, OpenAlertsOfPerson, type FireEffectsDeps} from "./fire-effects.js";
import {recipientActor, SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";

export interface RunnerOptions {
  /** Escalations fired per journal transaction. */
  batch?: number;
  /** A delivery with no outcome after this long is cut off and recorded failed. */
  deliveryTimeoutMs?: number;
  /** How often channel availability is compared, so chains waiting for a channel go the moment it is back. */
  channelCheckMs?: number;
}

/**
 * Where an acknowledgement heard during a delivery (a key pressed in a call) goes: the owner of
 * the alert lifecycle, the notifications service. The runner's one call into it.
 */
export interface DeliveryAcknowledgements {
  acknowledgeMany(ids: string[], by: string | null, via: AckVia, actor: Actor): Promise<void>;
}

/** What the runner works with, by name. */
export interface RunnerDeps {
  journal: Journal;
  notificationRecords: NotificationsRepository;
  escalations: EscalationsRepository;
  attempts: AttemptsRepository;
  events: EventPublisher;
  audit: AuditService;
  acknowledgements: DeliveryAcknowledgements;
  policies: PagingPolicies;
  registry: ChannelRegistry;
  channelStatus: ChannelStatusService;
  contactFailures: ContactFailuresRepository;
  storms: StormGrouping;
  clock: Clock;
  logger: Logger;
}

/**
 * Runs escalations. The next due time of every running chain is stored; `tick()` fires what is
 * due through the pure planner and commits the new state, the attempts and the events together,
 * then hands the attempts to their channel's queue outside the transaction. A timer aims at the
 * earliest stored wake-up (no fixed polling). Every wake-up carries the chain's generation, so a
 * stale one (the alert was acknowledged meanwhile) does nothing. A chain that cannot carry any
 * step because its channels cannot be used waits (undeliverable, said loudly) and goes as soon
 * as a channel it needs becomes usable. It hears of new and stopped chains from the journal
 * (`EscalationsRepository.watch`), not from the service that changed them.
 */
export class EscalationRunner {
  private readonly queues = new Map<Channel, ChannelQueue>();
  private readonly firedThisPass = new Set<string>();
  private readonly wakeTimer: WakeTimer;
  private readonly passes = new RepeatingPass(
    () => this.fireDue(),
    (error) => {
      if (error) this.logger.error("escalation tick failed", {error: error});
      this.arm();
    }
  );
  private started = false;
  private readonly batch: number;
  private readonly channelCheckMs: number;
  private channelWatch: NodeJS.Timeout | null = null;
  private readonly outcomes: AttemptOutcomes;
  private readonly effectsDeps: FireEffectsDeps;
  private readonly journal: Journal;
  private readonly notificationRecords: NotificationsRepository;
  private readonly escalations: EscalationsRepository;
  private readonly attempts: AttemptsRepository;
  private readonly channelStatus: ChannelStatusService;
  private readonly contactFailures: ContactFailuresRepository;
  private readonly storms: StormGrouping;
  private readonly openAlerts: OpenAlertsOfPerson;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly policies: PagingPolicies;
  private readonly audit: AuditService;

  constructor(deps: RunnerDeps, options: RunnerOptions = {}) {
    ({
      journal: this.journal,
      notificationRecords: this.notificationRecords,
      escalations: this.escalations,
      attempts: this.attempts
    } = deps);
    ({
      channelStatus: this.channelStatus,
      contactFailures: this.contactFailures,
      storms: this.storms,
      clock: this.clock,
      logger: this.logger,
      policies: this.policies,
      audit: this.audit
    } = deps);
    this.effectsDeps = deps;
    this.openAlerts = new OpenAlertsOfPerson(deps.journal, deps.notificationRecords);
    this.outcomes = new AttemptOutcomes({...deps, hurried: (dueNow) => this.hurried(dueNow)});
    this.wakeTimer = new WakeTimer(deps.clock, () => void this.tick());
    this.batch = options.batch ?? 200;
    this.channelCheckMs = options.channelCheckMs ?? 1000;
    const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 10 * 60_000;
    for (const driver of deps.registry.all()) {
      this.queues.set(
        driver.channel,
        new ChannelQueue(
          driver,
          {
            stillOpen: (notificationId) => this.stillOpen(notificationId),
            dropped: (attempts) =>
              this.outcomes.record(
                attempts.map((attempt) => ({attempt, outcome: "skipped", error: "closed before the attempt started"}))
              ),
            finished: (outcome) => this.outcomes.finished(outcome),
            acknowledged: (notificationIds, recipientUuid, by) =>
              deps.acknowledgements.acknowledgeMany(notificationIds, by, driver.channel, recipientActor(recipientUuid))
          },
          deliveryTimeoutMs
        )
      );
    }
    deps.escalations.watch({
      started: (groupedWith) => this.chainStarted(groupedWith),
      stopped: (notificationId) => this.chainStopped(notificationId)
    });
  }

  /** Recovers attempts a dead process left in flight, wakes chains that wait for a channel, then arms the timer. */
  async start(): Promise<void> {
    const interrupted = this.journal.read(() => this.attempts.unfinished());
    if (interrupted.length) {
      // The outcome of an attempt interrupted by a crash is unknown: it is recorded, not run
      // again (a person must not get the same call twice); the chain goes on from its stored wake-up.
      await this.journal.write(() => {
        for (const attempt of interrupted)
          this.attempts.finish(
            attempt.id,
            "failed",
            "interrupted: the gateway stopped during this attempt",
            isoTimestamp(this.clock.now())
          );
      });
      this.logger.warn("recorded attempts interrupted by a restart", {count: interrupted.length});
    }
    // The channels may have been configured or repaired while the gateway was down.
    const waiting = await this.journal.write(() => this.escalations.wakeWaiting(isoTimestamp(this.clock.now())));
    if (waiting > 0) this.logger.warn("alerts are waiting for a channel", {count: waiting});
    this.started = true;
    this.channelWatch = setInterval(() => void this.checkChannels(), this.channelCheckMs);
    this.channelWatch.unref();
    this.arm();
  }

  /** Stops firing, cuts off deliveries in progress and records their outcomes while the journal is open. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.channelWatch) clearInterval(this.channelWatch);
    this.channelWatch = null;
    this.wakeTimer.cancel();
    await this.passes.running;
    for (const queue of this.queues.values()) queue.close("the gateway is stopping");
    await this.idle();
  }

  /** Resolves when no tick runs, no delivery is under way and every outcome has been recorded. */
  async idle(): Promise<void> {
    const busy = () =>
      this.passes.running !== null || this.outcomes.busy || [...this.queues.values()].some((queue) => !queue.isDrained);
    while (busy()) {
      await this.passes.running;
      await Promise.all([...this.queues.values()].map((queue) => queue.drained()));
      await this.outcomes.idle();
    }
  }

  /**
   * When a channel some chain waits for can be used now, every waiting chain is due at once (each
   * then carries what it can). Compared with what the chains wait for, not with the last look, so
   * an outage shorter than a look is not missed. Cheap: one read of an index, and the drivers keep
   * their state in memory. A contact marked unusable is no channel to watch: it waits for a fix;
   * nor is a wait for no channel at all (an empty plan, quiet hours), which looks again every minute.
   */
  async checkChannels(): Promise<void> {
    const waitedFor = this.journal
      .read(() => this.escalations.undeliverable())
      .reasons.flatMap((wait) => (wait.channel === null || wait.reason === CONTACT_UNUSABLE ? [] : [wait.channel]));
    if (!waitedFor.some((channel) => this.channelStatus.gatewayChannel(channel).available)) return;
    const woken = await this.journal.write(() => this.escalations.wakeWaiting(isoTimestamp(this.clock.now())));
    if (woken > 0) await this.tick();
  }

  private hurried(dueNow: boolean): void {
    if (!this.started) return;
    if (dueNow) void this.tick();
    else this.arm();
  }

  queueDepth(channel: Channel): number {
    return this.queues.get(channel)?.depth ?? 0;
  }

  // A chain that joined a storm at acceptance is due when its storm's page is: the timer aims at it.
  private chainStarted(groupedWith: string | null): void {
    if (!this.started) return;
    if (groupedWith === null) void this.tick();
    else this.arm();
  }

  private chainStopped(notificationId: string): void {
    for (const queue of this.queues.values()) queue.abort(notificationId);
    this.storms.forget(notificationId);
    // Chains that waited behind the closed one are due now.
    if (this.started) void this.tick();
  }

  /** One pass: fires every escalation due now, a batch per transaction, then re-arms the timer. */
  tick(): Promise<void> {
    return this.passes.run();
  }

  // Attempts are handed to the queues once the whole pass has committed, so everything due at
  // once for one person on one channel (an alert storm) leaves as a single delivery.
  private async fireDue(): Promise<void> {
    const dispatch: Array<{channel: Channel; queued: QueuedAttempt}> = [];
    this.firedThisPass.clear();
    // One reading of the clock per pass: chains fired together get the same next wake-up and so
    // fire together again (a storm's steps stay one delivery), however long the pass takes.
    const nowMs = this.clock.now();
    for (;;) {
      const due = this.journal.read(() => this.escalations.due(isoTimestamp(nowMs), this.batch));
      if (due.length === 0) break;
      const fired = await this.journal.write(() => {
        // Chains fired by this run of the write; they join the pass's once it has committed.
        const firedNow = new Set<string>();
        this.journal.afterCommit(() => firedNow.forEach((id) => this.firedThisPass.add(id)));
        return due.flatMap((id) => this.fire(id, nowMs, firedNow));
      });
      dispatch.push(...fired);
    }
    this.firedThisPass.clear();
    for (const [channel, queue] of this.queues)
      queue.enqueue(...dispatch.filter((attempt) => attempt.channel === channel).map((attempt) => attempt.queued));
  }

  // Nothing running means nothing to wake for: a new alert wakes the runner through accepted().
  private arm(): void {
    if (!this.started) return;
    const earliest = this.journal.read(() => this.escalations.earliestDue());
    this.wakeTimer.aim(earliest === null ? null : Date.parse(earliest));
  }

  /**
   * Alert storms (`StormGrouping`): a chain due while another pages its target waits for that
   * chain's next step, or for the page its storm shares, when either comes within
   * `storm.max_join_delay_seconds` of its acceptance.
   */
  private waitsBehindAnotherChain(
    {record, row}: {record: NotificationRecord; row: EscalationRecord},
    contacted: string[],
    nowMs: number,
    firedNow: Set<string>
  ): boolean {
    if (row.step !== 0 || contacted.length === 0) return false;
    const anchor = this.storms.anchorAmong([record.target_uuid, ...contacted], nowMs);
    if (!anchor || anchor.row.notification_id === record.id) return false;
    // Chains fired in this same pass leave together anyway, in one delivery.
    if (this.firedThisPass.has(anchor.row.notification_id) || firedNow.has(anchor.row.notification_id)) return false;
    if (!StormGrouping.canJoin(anchor, record.priority)) return false;
    const join = this.storms.joinFor(anchor, record.target_uuid, [record.target_uuid, ...contacted], {
      acceptedMs: Date.parse(record.created_at),
      nowMs
    });
    if (!join) return false;
    this.escalations.group(record.id, {...anchor.row, next_step_at: isoTimestamp(join.atMs)}, join.current);
    return true;
  }

  /**
   * Inside the transaction: runs the planner for one notification and applies its effects. Its
   * effects on memory (log lines, storm grouping) are after-commit effects: this may run twice.
   */
  private fire(
    notificationId: string,
    nowMs: number,
    firedNow: Set<string>
  ): Array<{channel: Channel; queued: QueuedAttempt}> {
    const record = this.notificationRecords.get(notificationId);
    const row = this.escalations.forNotification(notificationId);
    const stored = this.escalations.policyOf(notificationId);
    if (!record || !row || !stored) return [];
    if (this.handedOff(record, stored, nowMs)) return this.fire(notificationId, nowMs, firedNow);
    // A policy's level about to start pages whoever its schedules put on call now; its steps stay where they were.
    const policy = this.policies.levelResolved(stored, row, nowMs) ?? stored;
    if (policy !== stored) this.escalations.rewritePolicy(notificationId, policy);
    if (row.grouped_with !== null) this.escalations.ungroup(record.id);
    const state: EscalationState = {
      steps_total: row.steps_total,
      generation: row.generation,
      next_step_at: row.next_step_at === null ? null : Date.parse(row.next_step_at),
      status: row.state,
      progress: row.progress,
      waiting_for: row.waiting_for
    };
    const contactOf = (channel: Channel, recipientUuid: string) =>
      policy.members.find((member) => member.recipient_uuid === recipientUuid)?.contacts[channel] ?? null;
    // A contact marked unusable is tried again for a critical alert: the mark may be stale, and a critical page must not depend on it.
    const contactUnusable = (channel: Channel, recipientUuid: string) =>
      record.priority === "critical"
        ? null
        : this.contactFailures.reasonFor(recipientUuid, channel, contactOf(channel, recipientUuid));
    const {state: next, effects} = advance(state, {type: "wake", generation: row.generation}, nowMs, {
      policy,
      channelUnavailable: (channel, recipientUuid) =>
        this.channelStatus.gatewayChannel(channel).reason ?? contactUnusable(channel, recipientUuid)
    });
    // Whom this wake-up would really contact (a quiet or blocked first step passes to later ones).
    const contacted = effects.flatMap((effect) => (effect.type === "attempt" ? [effect.recipient_uuid] : []));
    // Planned but not applied: a chain that would page someone another chain is paging waits for it instead.
    if (row.grouped_with === null && this.waitsBehindAnotherChain({record, row}, contacted, nowMs, firedNow)) return [];
    firedNow.add(notificationId);
    this.escalations.save({
      notification_id: notificationId,
      step: next.progress.carried.length,
      generation: next.generation,
      state: next.status,
      next_step_at: next.next_step_at === null ? null : isoTimestamp(next.next_step_at),
      progress: next.progress,
      waiting_for: next.waiting_for
    });
    this.journal.afterCommit(() =>
      reportWaiting(this.logger, {record, before: row.waiting_for, after: next.waiting_for, effects})
    );
    // The first chain that pages a target or person is the one a storm's newcomers join, until it closes or its page fails.
    if (contacted.length)
      this.journal.afterCommit(() =>
        this.storms.paged([record.target_uuid, ...contacted], notificationId, record.priority, nowMs)
      );
    // A newcomer paged while another chain pages the person, not with it (the limit did not let it wait), names
    // all their open alerts; one more urgent (it never waits) only its own. This chain is in firedNow itself.
    const storm = row.step === 0 ? this.storms.anchorAmong([record.target_uuid, ...contacted], nowMs) : null;
    const anchorId =
      storm && StormGrouping.canJoin(storm, record.priority) ? storm.row.notification_id : notificationId;
    const namesOpen = !firedNow.has(anchorId) && !this.firedThisPass.has(anchorId) ? this.openAlerts : null;
    return new FireEffects(this.effectsDeps, {record, policy, stepsTotal: next.steps_total, nowMs, namesOpen}).apply(
      effects
    );
  }

  /**
   * A schedule's chain pages whoever is on call when its next step is due: after a hand-off (or
   * into a gap, to the fallback) it starts again on the new person's chain, at once, under a new
   * snapshot and generation. Recipients' and groups' snapshots stand, but for one with no channel
   * at all, which starts again once the configuration gives it one (`handOff`).
   */
  private handedOff(record: NotificationRecord, policy: PolicySnapshot, nowMs: number): boolean {
    const next = this.policies.handOff(policy, nowMs);
    if (!next) return false;
    const plan = {policy: next, stepsTotal: countSteps(next), progress: freshProgress()};
    if (!this.escalations.replan(record.id, plan, isoTimestamp(nowMs))) return false;
    this.audit.append(
      SYSTEM_ACTOR,
      policy.target.kind === "schedule" ? "escalation.handed_off" : "escalation.replanned",
      {type: "notification", id: record.id, source: record.source},
      {schedule: policy.target.uuid, from: policy.on_call ?? null, to: next.on_call ?? null}
    );
    return true;
  }

  // Read synchronously right before a driver starts: no commit can slip between this check and
  // the start, so no attempt starts after an acknowledgement has committed.
  private stillOpen(notificationId: string): boolean {
    const record = this.journal.read(() => this.notificationRecords.get(notificationId));
    return record !== null && isOpen(record.status);
  }
}
