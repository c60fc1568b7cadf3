import type {AttemptRecord} from "../../domain/notification.js";
import {retryAfterFailureSeconds} from "../../domain/recipient.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {AttemptsRepository} from "../../store/journal/attempts.repository.js";
import type {ContactFailuresRepository} from "../../store/journal/contact-failures.repository.js";
import type {LateConfirmation} from "../../channels/channel.js";
import type {DeliveryOutcome, QueuedAttempt} from "./channel-queue.js";
import type {EventPublisher} from "../notifications/event-publisher.js";
import {attemptView} from "../notifications/notification-view.js";
import type {StormGrouping} from "../notifications/storm-grouping.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";

/** Outcomes that reached the person's device or the person: the contact is usable after all. */
const REACHED: ReadonlySet<AttemptRecord["outcome"]> = new Set(["sent", "delivered", "answered"]);
/** Outcomes of a contact that was tried and did not get through. */
const NOT_REACHED: ReadonlySet<AttemptRecord["outcome"]> = new Set(["no_answer", "busy", "failed"]);

export interface OutcomeRow {
  attempt: QueuedAttempt;
  outcome: AttemptRecord["outcome"];
  error: string | null;
}

export interface AttemptOutcomesDeps {
  journal: Journal;
  notificationRecords: NotificationsRepository;
  escalations: EscalationsRepository;
  attempts: AttemptsRepository;
  contactFailures: ContactFailuresRepository;
  events: EventPublisher;
  storms: StormGrouping;
  channelStatus: ChannelStatusService;
  clock: Clock;
  logger: Logger;
  /** A chain's next step was brought forward (key 9, or a step whose every attempt failed). */
  hurried(dueNow: boolean): void;
}

/**
 * Records how attempts ended, after their delivery, each in a journal transaction of its own:
 * the outcome, the contact marked unusable on a permanent failure, the event, and the chain's
 * next step brought forward when the person passed the alert on (now) or when every attempt of
 * the step failed (after the recipient's `retry_after_failure_seconds`, not the whole ack
 * timeout: nobody can acknowledge a call that was never answered).
 */
export class AttemptOutcomes {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: AttemptOutcomesDeps) {}

  /** Resolves once every outcome handed in so far has been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  finished(outcome: DeliveryOutcome): void {
    const {result, error} = outcome;
    const rows = outcome.attempts.map((attempt) => ({
      attempt,
      outcome: result ? result.outcome : ("failed" as const),
      error: result ? result.detail : (error?.message ?? "failed")
    }));
    if (error?.permanent)
      this.deps.logger.warn("permanent channel failure: the contact is marked unavailable", {
        attempts: outcome.attempts.map((attempt) => attempt.attemptId),
        error: error.message
      });
    this.record(rows, {permanent: error?.permanent ?? false, passedOn: result?.passedOn ?? false});
    // A report may come hours later; it is recorded whenever it comes and is not waited for.
    void result?.confirmation?.then((late) => late && this.confirmed(outcome.attempts, late));
  }

  record(rows: OutcomeRow[], {permanent = false, passedOn = false} = {}): void {
    const {journal, clock} = this.deps;
    const work = journal
      .write(() => {
        const nowMs = clock.now();
        return rows.reduce((hurried, row) => this.recordOne(row, nowMs, permanent, passedOn) || hurried, false);
      })
      .then((hurried) => {
        if (hurried) this.deps.hurried(passedOn);
      })
      .catch((failure) => this.deps.logger.error("could not record an attempt's outcome", {error: failure as Error}));
    this.track(work);
  }

  /** Inside the transaction (its effects on memory after the commit); true when the chain's next step was brought forward. */
  private recordOne(
    {attempt, outcome, error}: OutcomeRow,
    nowMs: number,
    permanent: boolean,
    passedOn: boolean
  ): boolean {
    const {journal, attempts, notificationRecords, escalations, contactFailures, events, storms, logger} = this.deps;
    const now = isoTimestamp(nowMs);
    if (!attempts.finish(attempt.attemptId, outcome, error, now)) return false;
    const record = notificationRecords.get(attempt.alert.notification_id);
    const stored = attempts.get(attempt.attemptId);
    if (!record || !stored) return false;
    // A page that did not reach the person is no page for a storm's newcomers to join.
    if (outcome === "failed") journal.afterCommit(() => storms.forget(record.id));
    if (permanent)
      contactFailures.mark(
        {recipientUuid: attempt.recipient.uuid, channel: stored.channel, contact: attempt.contact},
        error ?? "failed",
        now
      );
    if (REACHED.has(outcome) && contactFailures.clear(attempt.recipient.uuid, stored.channel, attempt.contact)) {
      journal.afterCommit(() =>
        logger.info("a contact marked unusable reached someone again: it is usable again", {
          recipient_uuid: attempt.recipient.uuid,
          channel: stored.channel
        })
      );
    }
    const shown = attemptView(stored);
    // `notification.sent` went out when the attempt was handed to its channel.
    if (outcome === "delivered" || outcome === "answered")
      events.emitFor("notification.delivered", record, nowMs, {attempt: shown});
    if (NOT_REACHED.has(outcome)) events.emitFor("contact.failed", record, nowMs, {attempt: shown});
    if (passedOn) return escalations.hurry(record.id, stored.step, now);
    if (!NOT_REACHED.has(outcome)) return false;
    // The attempts of the step that went to a channel (skips and deferrals aside).
    const tried = attempts
      .ofStep(record.id, stored.step)
      .filter((row) => row.outcome !== "skipped" && row.outcome !== "deferred");
    if (!tried.every((row) => NOT_REACHED.has(row.outcome))) return false;
    // The channel failed under the step (a server that went away unnoticed): the step did not
    // really go out, so it is tried again once the channel works, and the alert waits loudly
    // rather than running out with nobody reached.
    if (outcome === "failed" && !this.deps.channelStatus.gatewayChannel(stored.channel).available)
      escalations.uncarry(record.id, stored.step);
    const waitSeconds = this.retryAfterFailureSeconds(record.id, new Set(tried.map((row) => row.recipient_uuid)));
    return escalations.hurry(record.id, stored.step, isoTimestamp(nowMs + waitSeconds * 1000));
  }

  /** The longest retry wait among the members tried, as the snapshot froze it. */
  private retryAfterFailureSeconds(notificationId: string, tried: Set<string>): number {
    const policy = this.deps.escalations.policyOf(notificationId);
    const waits = (policy?.members ?? [])
      .filter((member) => tried.has(member.recipient_uuid))
      .map((member) => retryAfterFailureSeconds(member));
    return waits.length ? Math.max(...waits) : 0;
  }

  /** A channel's later report on sent attempts: delivered, or failed after all. */
  private confirmed(queued: QueuedAttempt[], late: LateConfirmation): void {
    const {journal, clock, attempts, notificationRecords, events} = this.deps;
    const work = journal
      .write(() => {
        const nowMs = clock.now();
        for (const attempt of queued) {
          if (!attempts.confirm(attempt.attemptId, late.outcome, late.detail)) continue;
          const record = notificationRecords.get(attempt.alert.notification_id);
          const stored = attempts.get(attempt.attemptId);
          if (!record || !stored) continue;
          const shown = attemptView(stored);
          events.emitFor(late.outcome === "delivered" ? "notification.delivered" : "contact.failed", record, nowMs, {
            attempt: shown
          });
        }
      })
      .catch((failure) => this.deps.logger.error("could not record a delivery report", {error: failure as Error}));
    this.track(work);
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
