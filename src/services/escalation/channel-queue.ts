import {urgencyRank} from "../../domain/vocabulary.js";
import type {AlertSummary, ChannelDriver, Delivery, DeliveryResult} from "../../channels/channel.js";
import {ChannelError} from "../../channels/channel.js";

/** One pending attempt waiting for its channel. */
export interface QueuedAttempt {
  attemptId: string;
  recipient: Delivery["recipient"];
  contact: string;
  alert: AlertSummary;
  /**
   * The person's other open alerts, named in this page's text beside `alert` (a storm's newcomer
   * paged at once names the alerts whose paging it did not wait for). They have no attempt here:
   * the page records nothing for them, but an acknowledgement through it acknowledges them too.
   */
  alsoOpen?: AlertSummary[];
}

/** How a delivery ended for the attempts it carried. */
export interface DeliveryOutcome {
  attempts: QueuedAttempt[];
  result: DeliveryResult | null;
  error: ChannelError | null;
}

export interface ChannelQueueHooks {
  /** Called synchronously right before a delivery starts: attempts (and alerts named) whose alert was closed meanwhile are dropped. */
  stillOpen(notificationId: string): boolean;
  dropped(attempts: QueuedAttempt[]): void;
  finished(outcome: DeliveryOutcome): void;
  /** The person acknowledged through a delivery in progress: every alert it named. */
  acknowledged(notificationIds: string[], recipientUuid: string, by: string): Promise<void>;
}

interface Job {
  contact: string;
  attempts: QueuedAttempt[];
  rank: number;
  seq: number;
}

/**
 * A channel's own queue: at most `driver.concurrency` deliveries at once (the modem has one
 * line), the most urgent waiting job first, then first come. Attempts for a contact that already
 * has a job waiting join that job, so a storm of alerts to one person becomes one call naming
 * them all. A driver that hangs is cut off after `timeoutMs` and only ever holds its own channel.
 */
export class ChannelQueue {
  private waiting: Job[] = [];
  private readonly busyContacts = new Set<string>();
  private readonly controllers = new Map<string, Set<AbortController>>();
  private running = 0;
  private seq = 0;
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly driver: ChannelDriver,
    private readonly hooks: ChannelQueueHooks,
    private readonly timeoutMs: number
  ) {}

  get isDrained(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }

  /** Resolves once nothing waits and no delivery runs. */
  drained(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  get depth(): number {
    return this.waiting.reduce((sum, job) => sum + job.attempts.length, 0);
  }

  /** Queues attempts, then starts what may start: attempts of one batch that share a contact travel together. */
  enqueue(...attempts: QueuedAttempt[]): void {
    for (const attempt of attempts) this.join(attempt);
    this.pump();
  }

  private join(attempt: QueuedAttempt): void {
    const rank = urgencyRank(attempt.alert.priority);
    const job = this.waiting.find((candidate) => candidate.contact === attempt.contact);
    if (job) {
      job.attempts.push(attempt);
      job.rank = Math.min(job.rank, rank);
    } else {
      this.waiting.push({contact: attempt.contact, attempts: [attempt], rank, seq: this.seq++});
    }
  }

  /** Aborts deliveries in progress that carry this notification (an ack elsewhere hangs up the call). */
  abort(notificationId: string): void {
    for (const controller of this.controllers.get(notificationId) ?? [])
      controller.abort(new Error("acknowledged or resolved elsewhere"));
  }

  /**
   * The gateway is stopping: deliveries in progress are aborted (their outcomes still get
   * recorded) and waiting ones are let go; their attempts stay pending in the journal, and the
   * next start records them as interrupted, exactly as after a crash.
   */
  close(reason: string): void {
    this.waiting = [];
    for (const set of this.controllers.values()) for (const controller of set) controller.abort(new Error(reason));
    this.pump();
  }

  private pump(): void {
    while (this.running < this.driver.concurrency) {
      const job = this.nextJob();
      if (!job) break;
      this.start(job);
    }
    if (this.running === 0 && this.waiting.length === 0) for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  // A contact already on a delivery waits: the person hears one call at a time, and what
  // piles up meanwhile goes out together in the next one.
  private nextJob(): Job | null {
    const ready = this.waiting.filter((job) => !this.busyContacts.has(job.contact));
    if (ready.length === 0) return null;
    ready.sort((a, b) => a.rank - b.rank || a.seq - b.seq);
    this.waiting = this.waiting.filter((job) => job !== ready[0]);
    return ready[0];
  }

  private start(job: Job): void {
    const open = job.attempts.filter((attempt) => this.hooks.stillOpen(attempt.alert.notification_id));
    // Sets, not includes(): a storm's job carries thousands of attempts (issue 36: a quadratic pass here stalled the loop for seconds).
    const stillOpen = new Set(open);
    const closed = job.attempts.filter((attempt) => !stillOpen.has(attempt));
    if (closed.length) this.hooks.dropped(closed);
    if (open.length === 0) return;
    this.running++;
    this.busyContacts.add(job.contact);
    const controller = new AbortController();
    const ids = open.map((attempt) => attempt.alert.notification_id);
    const alerts = [...open.map((attempt) => attempt.alert), ...this.alsoOpen(open, ids)];
    for (const id of ids) this.controllers.set(id, (this.controllers.get(id) ?? new Set()).add(controller));
    const delivery: Delivery = {
      channel: this.driver.channel,
      recipient: open[0].recipient,
      contact: job.contact,
      alerts,
      acknowledge: (by) => {
        // The closing this commit causes must not cut off the delivery that caused it.
        this.detach(ids, controller);
        return this.hooks.acknowledged(
          alerts.map((alert) => alert.notification_id),
          open[0].recipient.uuid,
          by
        );
      }
    };
    const timer = setTimeout(
      () => controller.abort(new Error(`no outcome within ${this.timeoutMs} ms`)),
      this.timeoutMs
    );
    // Neither handler rejects: a driver's failure becomes an outcome, and the queue moves on even
    // if recording that outcome threw.
    void this.driver
      .deliver(delivery, controller.signal)
      .then(
        (result) => ({attempts: open, result, error: null}),
        (error: unknown) => ({
          attempts: open,
          result: null,
          error:
            error instanceof ChannelError
              ? error
              : asChannelError(controller.signal.aborted ? controller.signal.reason : error)
        })
      )
      .then((outcome) => {
        clearTimeout(timer);
        this.detach(ids, controller);
        this.running--;
        this.busyContacts.delete(job.contact);
        try {
          this.hooks.finished(outcome);
        } finally {
          this.pump();
        }
      });
  }

  // Alerts a storm's page names beside those it carries, each once, and only while still open.
  private alsoOpen(attempts: QueuedAttempt[], carried: string[]): AlertSummary[] {
    const named = new Map<string, AlertSummary>();
    const carriedIds = new Set(carried);
    for (const attempt of attempts)
      for (const alert of attempt.alsoOpen ?? [])
        if (!carriedIds.has(alert.notification_id)) named.set(alert.notification_id, alert);
    return [...named.values()].filter((alert) => this.hooks.stillOpen(alert.notification_id));
  }

  private detach(notificationIds: string[], controller: AbortController): void {
    for (const id of notificationIds) {
      const set = this.controllers.get(id);
      set?.delete(controller);
      if (set?.size === 0) this.controllers.delete(id);
    }
  }
}

/** A driver's failure that is no ChannelError (or the reason its delivery was cut off), as the transient channel error it records. */
function asChannelError(failure: unknown): ChannelError {
  return new ChannelError(failure instanceof Error ? failure.message : String(failure), false);
}
