import {advance, type EscalationEffect, type EscalationState} from "../domain/escalation/index.js";
import {isOpen, type AttemptRecord, type EscalationRecord, type NotificationRecord} from "../domain/notification.js";
import {maskContact} from "../domain/recipient.js";
import type {Channel} from "../domain/vocabulary.js";
import {newId} from "../lib/ids.js";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {WakeTimer} from "../lib/wake-timer.js";
import {RepeatingPass} from "../lib/repeating-pass.js";
import type {Journal} from "../store/journal/journal.js";
import type {NotificationsRepository} from "../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../store/journal/escalations.repository.js";
import type {AttemptsRepository} from "../store/journal/attempts.repository.js";
import type {Actor} from "../store/journal/audit.repository.js";
import type {ChannelRegistry} from "../channels/channel-registry.js";
import type {ContactFailuresRepository} from "../store/journal/contact-failures.repository.js";
import type {ChannelStatusService} from "./channel-status.service.js";
import {ChannelQueue, type DeliveryOutcome, type QueuedAttempt} from "./channel-queue.js";
import type {EventPublisher} from "./event-publisher.js";
import type {AuditService} from "./audit.service.js";
import type {NotificationListener, NotificationsService} from "./notifications.service.js";
import {StormGrouping} from "./storm-grouping.js";

const SYSTEM: Actor = {type: "system", id: null};

export interface RunnerOptions {
  /** Escalations fired per journal transaction. */
  batch?: number;
  /** A delivery with no outcome after this long is cut off and recorded failed. */
  deliveryTimeoutMs?: number;
}

/**
 * Runs escalations. The next due time of every running chain is stored; `tick()` fires what is
 * due through the pure planner and commits the new state, the attempts and the events together,
 * then hands the attempts to their channel's queue outside the transaction. A timer aims at the
 * earliest stored wake-up (no fixed polling). Every wake-up carries the chain's generation, so a
 * stale one (the alert was acknowledged meanwhile) does nothing.
 */
export class EscalationRunner implements NotificationListener {
  private readonly queues = new Map<Channel, ChannelQueue>();
  private readonly firedThisPass = new Set<string>();
  private readonly wakeTimer: WakeTimer;
  private readonly passes = new RepeatingPass(
    () => this.fireDue(),
    (error) => {
      if (error) this.logger.error("escalation tick failed", {error: error as Error});
      this.arm();
    }
  );
  private started = false;
  private readonly batch: number;
  private readonly deliveryTimeoutMs: number;
  /** Deliveries handed to drivers and not yet recorded: `idle()` waits for them. */
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly journal: Journal,
    private readonly notificationRecords: NotificationsRepository,
    private readonly escalations: EscalationsRepository,
    private readonly attempts: AttemptsRepository,
    private readonly events: EventPublisher,
    private readonly audit: AuditService,
    private readonly notifications: NotificationsService,
    private readonly registry: ChannelRegistry,
    private readonly channelStatus: ChannelStatusService,
    private readonly contactFailures: ContactFailuresRepository,
    private readonly storms: StormGrouping,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: RunnerOptions = {}
  ) {
    this.wakeTimer = new WakeTimer(clock, () => void this.tick());
    this.batch = options.batch ?? 200;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 10 * 60_000;
    for (const driver of registry.all()) {
      this.queues.set(driver.channel, new ChannelQueue(driver, {
        stillOpen: (attempt) => this.stillOpen(attempt),
        dropped: (attempts) => this.record(attempts.map((attempt) => ({attempt, outcome: "skipped", error: "closed before the attempt started"}))),
        finished: (outcome) => this.finish(outcome),
        acknowledged: (attempts, by) =>
          this.notifications.acknowledgeMany(attempts.map((attempt) => attempt.alert.notification_id), by, driver.channel, SYSTEM)
      }, this.deliveryTimeoutMs));
    }
    notifications.listen(this);
  }

  /** Recovers attempts a dead process left in flight, then arms the timer. */
  async start(): Promise<void> {
    const interrupted = this.journal.read(() => this.attempts.unfinished());
    if (interrupted.length) {
      // The outcome of an attempt interrupted by a crash is unknown: it is recorded, not run
      // again (a person must not get the same call twice); the chain goes on from its stored wake-up.
      await this.journal.write(() => {
        for (const attempt of interrupted) this.attempts.finish(attempt.id, "failed", "interrupted: the gateway stopped during this attempt", isoTimestamp(this.clock.now()));
      });
      this.logger.warn("recorded attempts interrupted by a restart", {count: interrupted.length});
    }
    this.started = true;
    this.arm();
  }

  /** Stops firing, cuts off deliveries in progress and records their outcomes while the journal is open. */
  async stop(): Promise<void> {
    this.started = false;
    this.wakeTimer.cancel();
    await this.passes.running;
    for (const queue of this.queues.values()) queue.close("the gateway is stopping");
    await this.idle();
  }

  /** Resolves when no tick runs, no delivery is under way and every outcome has been recorded. */
  async idle(): Promise<void> {
    const busy = () => this.passes.running !== null || this.inFlight.size > 0 || [...this.queues.values()].some((queue) => !queue.isDrained);
    while (busy()) {
      await this.passes.running;
      await Promise.all([...this.queues.values()].map((queue) => queue.drained()));
      await Promise.all([...this.inFlight]);
    }
  }

  queueDepth(channel: Channel): number {
    return this.queues.get(channel)?.depth ?? 0;
  }

  // A chain that joined a storm at acceptance is due with the chain it waits behind, which the timer already aims at.
  accepted(chain: EscalationRecord): void {
    if (this.started && chain.grouped_with === null) void this.tick();
  }

  closed(notificationId: string): void {
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
    for (;;) {
      const nowMs = this.clock.now();
      const due = this.journal.read(() => this.escalations.due(isoTimestamp(nowMs), this.batch));
      if (due.length === 0) break;
      dispatch.push(
        ...(await this.journal.write(() => due.flatMap((id) => this.fire(id, nowMs))))
      );
    }
    this.firedThisPass.clear();
    for (const [channel, queue] of this.queues) queue.enqueue(...dispatch.filter((attempt) => attempt.channel === channel).map((attempt) => attempt.queued));
  }

  // Nothing running means nothing to wake for: a new alert wakes the runner through accepted().
  private arm(): void {
    if (!this.started) return;
    const earliest = this.journal.read(() => this.escalations.earliestDue());
    this.wakeTimer.aim(earliest === null ? null : Date.parse(earliest));
  }

  /** Alert storms (`StormGrouping`): a chain due while another pages its target waits for that chain's next step. */
  private waitsBehindAnotherChain(record: NotificationRecord, row: EscalationRecord, nowMs: number): boolean {
    if (row.grouped_with !== null) {
      this.escalations.ungroup(record.id);
      return false;
    }
    if (row.step !== 0) return false;
    const anchor = this.storms.pagingChain(record.target_uuid, nowMs);
    // Chains fired in this same pass leave together anyway, in one delivery.
    if (!anchor || anchor.row.notification_id === record.id || this.firedThisPass.has(anchor.row.notification_id)) return false;
    if (!StormGrouping.canJoin(anchor, row, record.priority)) return false;
    this.escalations.group(record.id, anchor.row);
    return true;
  }

  /** Inside the transaction: runs the planner for one notification and applies its effects. */
  private fire(notificationId: string, nowMs: number): Array<{channel: Channel; queued: QueuedAttempt}> {
    const record = this.notificationRecords.get(notificationId);
    const row = this.escalations.forNotification(notificationId);
    if (!record || !row) return [];
    if (this.waitsBehindAnotherChain(record, row, nowMs)) return [];
    const policy = this.escalations.policyOf(notificationId);
    if (!policy) return [];
    this.firedThisPass.add(notificationId);
    const state: EscalationState = {
      step: row.step,
      steps_total: row.steps_total,
      generation: row.generation,
      next_step_at: row.next_step_at === null ? null : Date.parse(row.next_step_at),
      status: row.state
    };
    const contactOf = (channel: Channel, recipientUuid: string) => policy.members.find((member) => member.recipient_uuid === recipientUuid)?.contacts[channel] ?? null;
    const {state: next, effects} = advance(state, {type: "wake", generation: row.generation}, nowMs, {
      policy,
      channelUnavailable: (channel, recipientUuid) =>
        this.channelStatus.gatewayChannel(channel).reason ?? this.contactFailures.reasonFor(recipientUuid, channel, contactOf(channel, recipientUuid))
    });
    this.escalations.save({notification_id: notificationId, step: next.step, generation: next.generation, state: next.status, next_step_at: next.next_step_at === null ? null : isoTimestamp(next.next_step_at)});
    // The first chain that pages a target is the one a storm's newcomers join, until it has no step left to share.
    if (effects.some((effect) => effect.type === "attempt") && !this.storms.pagingChain(record.target_uuid, nowMs)) this.storms.paged(record.target_uuid, notificationId);
    const now = isoTimestamp(nowMs);
    let current: NotificationRecord = record;
    const touched = effects.some((effect) => effect.type === "attempt" || effect.type === "skip");
    if (record.status === "queued" && touched) current = {...current, status: "notifying", updated_at: now};
    if (next.status === "exhausted") current = {...current, status: "exhausted", updated_at: now};
    if (current !== record) this.notificationRecords.saveState(current);
    if (next.status === "exhausted") this.audit.append(SYSTEM, "notification.exhausted", {type: "notification", id: notificationId}, {steps: next.steps_total}, record.source);

    const names = new Map(policy.members.map((member) => [member.recipient_uuid, member.name]));
    const alert = {notification_id: notificationId, priority: current.priority, message: current.message, source: current.source, link: current.link};
    const dispatch: Array<{channel: Channel; queued: QueuedAttempt}> = [];
    const inserted: AttemptRecord[] = [];
    for (const effect of effects) {
      if (effect.type === "attempt" || effect.type === "skip") {
        const attempt = this.attemptRow(notificationId, effect, now);
        this.attempts.insert(attempt);
        inserted.push(attempt);
        const recipient = {uuid: effect.recipient_uuid, name: names.get(effect.recipient_uuid) ?? effect.recipient_uuid};
        if (effect.type === "attempt") {
          dispatch.push({channel: effect.channel, queued: {attemptId: attempt.id, recipient, contact: effect.contact, alert}});
        } else {
          // In this transaction, so what the driver keeps for later (a relay) commits with the skip.
          this.registry.get(effect.channel)?.skipped?.({attemptId: attempt.id, recipient, contact: contactOf(effect.channel, effect.recipient_uuid), alert, reason: effect.reason});
        }
      }
    }
    // Every event of this fire shows the same state: the view (two reads) is built once, and only if needed.
    let view: ReturnType<NotificationsService["view"]> | null = null;
    const currentView = () => (view ??= this.notifications.view(current));
    for (const effect of effects) {
      if (effect.type !== "emit") continue;
      this.events.emit(effect.event, currentView(), nowMs);
    }
    for (const attempt of inserted.filter((row) => row.outcome === "skipped")) {
      const {notification_id: _id, ...shown} = attempt;
      this.events.emit("contact.failed", currentView(), nowMs, shown);
    }
    return dispatch;
  }

  private attemptRow(notificationId: string, effect: Extract<EscalationEffect, {type: "attempt" | "skip"}>, now: string): AttemptRecord {
    const skipped = effect.type === "skip";
    return {
      id: newId("att", Date.parse(now)),
      notification_id: notificationId,
      channel: effect.channel,
      recipient_uuid: effect.recipient_uuid,
      target: effect.contact ? maskContact(effect.contact) : "",
      step: effect.step,
      started_at: now,
      finished_at: skipped ? now : null,
      outcome: skipped ? "skipped" : "pending",
      error: skipped ? effect.reason : null
    };
  }

  // Read synchronously right before a driver starts: no commit can slip between this check and
  // the start, so no attempt starts after an acknowledgement has committed.
  private stillOpen(attempt: QueuedAttempt): boolean {
    const record = this.journal.read(() => this.notificationRecords.get(attempt.alert.notification_id));
    return record !== null && isOpen(record.status);
  }

  private finish(outcome: DeliveryOutcome): void {
    const {result, error} = outcome;
    const rows = outcome.attempts.map((attempt) => ({
      attempt,
      outcome: result ? result.outcome : ("failed" as const),
      error: result ? result.detail : (error?.message ?? "failed")
    }));
    if (error?.permanent) this.logger.warn("permanent channel failure: the contact is marked unavailable", {attempts: outcome.attempts.map((attempt) => attempt.attemptId), error: error.message});
    this.record(rows, {permanent: error?.permanent ?? false, passedOn: result?.passedOn ?? false});
  }

  private record(rows: Array<{attempt: QueuedAttempt; outcome: AttemptRecord["outcome"]; error: string | null}>, {permanent = false, passedOn = false} = {}): void {
    const work = this.journal
      .write(() => {
        const nowMs = this.clock.now();
        for (const {attempt, outcome, error} of rows) {
          if (!this.attempts.finish(attempt.attemptId, outcome, error, isoTimestamp(nowMs))) continue;
          const record = this.notificationRecords.get(attempt.alert.notification_id);
          const stored = this.attempts.forNotification(attempt.alert.notification_id).find((row) => row.id === attempt.attemptId);
          if (!record || !stored) continue;
          // A page that did not reach the person is no page for a storm's newcomers to join.
          if (outcome === "failed") this.storms.forget(record.id);
          if (permanent) this.contactFailures.mark(attempt.recipient.uuid, stored.channel, attempt.contact, error ?? "failed", isoTimestamp(nowMs));
          if (passedOn) this.escalations.hurry(stored.notification_id, stored.step, isoTimestamp(nowMs));
          const {notification_id: _id, ...shown} = stored;
          const type = ["sent", "delivered", "answered"].includes(outcome) ? "notification.sent" : outcome === "skipped" ? null : "contact.failed";
          if (type) this.events.emit(type, this.notifications.view(record), nowMs, shown);
        }
      })
      .then(() => {
        if (passedOn && this.started) void this.tick();
      })
      .catch((failure) => this.logger.error("could not record an attempt's outcome", {error: failure as Error}));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
