import {lookup} from "node:dns/promises";
import {isIP} from "node:net";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {SYSTEM_ACTOR} from "../domain/actor.js";
import type {Journal} from "../store/journal/journal.js";
import type {ClaimedDelivery, OutboxRepository} from "../store/journal/outbox.repository.js";
import type {WebhookDeliveriesRepository} from "../store/journal/webhook-deliveries.repository.js";
import type {WebhooksRepository} from "../store/config/repositories.js";
import type {AuditService} from "../services/shared/audit.service.js";
import {signDelivery} from "../lib/webhook-signing.js";
import {nextAttemptAt, retryAfterMs} from "../lib/retry-policy.js";
import {WakeTimer} from "../lib/wake-timer.js";
import {
  bareHost,
  refusedAddress,
  refusedDestination,
  STRICT_DESTINATIONS,
  type DestinationPolicy
} from "../lib/webhook-destination.js";

/** What the dispatcher needs; `random` and `requestTimeoutMs` exist so tests are exact and quick. */
export interface WebhookDispatcherOptions {
  journal: Journal;
  outbox: OutboxRepository;
  deliveries: WebhookDeliveriesRepository;
  subscriptions: WebhooksRepository;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
  /** Uniform in [0, 1), for retry jitter. */
  random?: () => number;
  /** How long one request may take, answer included. */
  requestTimeoutMs?: number;
  /** Which addresses may receive deliveries; strict unless the `webhooks.allow_link_local` setting says otherwise. */
  destinations?: DestinationPolicy;
  /** Every address a host name resolves to (the system resolver by default). */
  resolveHost?: (hostname: string) => Promise<string[]>;
}

interface Outcome {
  statusCode: number | null;
  error: string | null;
  retryAfter: string | null;
  /** On failure: on the backoff schedule, at once (handed back at shutdown), or never (gone). */
  retry: "backoff" | "now" | "never";
}

const DEFAULT_TIMEOUT_MS = 15_000;
const USER_AGENT = "Klaxon-Webhooks/1";
// After a pass failed (the journal cannot commit) due rows are still due; pause instead of spinning.
const FAILED_PASS_PAUSE_MS = 5_000;
const GONE = 410;

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

async function systemResolve(hostname: string): Promise<string[]> {
  return (await lookup(hostname, {all: true})).map((entry) => entry.address);
}

/**
 * Sends the webhook outbox. Each pass claims, with a compare-and-set, the oldest undelivered row
 * of every enabled subscription that is due, sends those concurrently, and records each attempt.
 * The network is only ever awaited between journal writes (claim in one, record in another), so
 * a receiver that hangs holds up neither ingest nor escalation nor the other subscriptions.
 */
export class WebhookDispatcher {
  private readonly random: () => number;
  private readonly requestTimeoutMs: number;
  private readonly destinations: DestinationPolicy;
  private readonly resolveHost: (hostname: string) => Promise<string[]>;
  private readonly inFlight = new Set<Promise<void>>();
  private shutdown = new AbortController();
  private readonly wakeTimer: WakeTimer;
  private started = false;
  private rearmQueued = false;
  private lastPassFailed = false;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.wakeTimer = new WakeTimer(options.clock, () => void this.tick().then(() => this.arm()));
    this.random = options.random ?? Math.random;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.destinations = options.destinations ?? STRICT_DESTINATIONS;
    this.resolveHost = options.resolveHost ?? systemResolve;
  }

  /** When the timer will next wake (ms since the epoch), or null when nothing is waiting. */
  get wakeAt(): number | null {
    return this.wakeTimer.wakeAt;
  }

  /** Hands back what a crash left in flight, then wakes whenever the store says a row is due. */
  async start(): Promise<void> {
    await this.recover();
    this.started = true;
    this.arm();
  }

  /** Stops waking, aborts requests in flight (their rows are due again at once) and waits until they are recorded. */
  async stop(): Promise<void> {
    this.started = false;
    this.wakeTimer.cancel();
    this.shutdown.abort();
    await Promise.all(this.inFlight);
    this.shutdown = new AbortController();
  }

  /** Call after committing outbox rows: the wake-up is recomputed (coalesced within one turn of the event loop). */
  nudge(): void {
    if (!this.started || this.rearmQueued) return;
    this.rearmQueued = true;
    setImmediate(() => {
      this.rearmQueued = false;
      this.arm();
    });
  }

  /** Rows left in `sending` by a crash go back to pending and their open attempts are closed as interrupted. */
  recover(): Promise<number> {
    const {journal, outbox, deliveries, clock} = this.options;
    return journal.write(() => {
      deliveries.interruptUnfinished(isoTimestamp(clock.now()), "interrupted: the gateway stopped during this attempt");
      return outbox.recoverInterrupted();
    });
  }

  /** One pass: claim what is due, send it, record every attempt. Resolves when all of them are recorded. */
  tick(): Promise<void> {
    const pass = this.pass().then(
      () => {
        this.lastPassFailed = false;
      },
      (error) => {
        this.lastPassFailed = true;
        this.options.logger.error("webhook dispatch pass failed", {error: error as Error});
      }
    );
    this.inFlight.add(pass);
    return pass.finally(() => this.inFlight.delete(pass));
  }

  private enabledSubscriptions(): string[] {
    return this.options.subscriptions
      .all()
      .filter((hook) => hook.enabled)
      .map((hook) => hook.id);
  }

  private async pass(): Promise<void> {
    const {journal, outbox, deliveries, clock} = this.options;
    const claimed = await journal.write(() => {
      const now = isoTimestamp(clock.now());
      return outbox.claimDue(now, this.enabledSubscriptions()).map((row) => ({
        row,
        deliveryId: deliveries.start({
          outbox_seq: row.seq,
          subscription_id: row.destination,
          event_id: row.event_id,
          attempt: row.attempt,
          started_at: now
        })
      }));
    });
    await Promise.all(claimed.map(({row, deliveryId}) => this.deliver(row, deliveryId)));
  }

  private async deliver(row: ClaimedDelivery, deliveryId: number): Promise<void> {
    const startedMs = this.options.clock.now();
    const outcome = await this.send(row, startedMs);
    const finishedMs = this.options.clock.now();
    await this.record(row, deliveryId, outcome, {startedMs, finishedMs});
    if (outcome.statusCode === GONE) {
      await this.disableGone(row.destination).catch((error) =>
        this.options.logger.error("could not disable a gone webhook subscription", {
          subscription_id: row.destination,
          error: error as Error
        })
      );
    }
    // Another row of this subscription may now be its head.
    this.nudge();
  }

  private async send(row: ClaimedDelivery, nowMs: number): Promise<Outcome> {
    const subscription = this.options.subscriptions.get(row.destination);
    if (!subscription)
      return {statusCode: null, error: "the subscription no longer exists", retryAfter: null, retry: "never"};
    const refused = await this.refusedTarget(subscription.url);
    if (refused) return {statusCode: null, error: `destination refused: ${refused}`, retryAfter: null, retry: "never"};
    try {
      const response = await fetch(subscription.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": USER_AGENT,
          ...signDelivery(subscription, row.event_id, nowMs, row.body)
        },
        body: row.body,
        // A redirect is a failure, not a hop: the signed body goes only to the address the admin gave.
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(this.requestTimeoutMs), this.shutdown.signal])
      });
      // The answer's body is of no use; dropping it frees the connection.
      await response.body?.cancel();
      const ok = isSuccess(response.status);
      return {
        statusCode: response.status,
        error: ok ? null : `HTTP ${response.status}`,
        retryAfter: response.headers.get("retry-after"),
        retry: response.status === GONE ? "never" : "backoff"
      };
    } catch (error) {
      if (this.shutdown.signal.aborted)
        return {statusCode: null, error: "interrupted: the gateway is stopping", retryAfter: null, retry: "now"};
      const failure = error as Error & {cause?: {message?: string}};
      const reason =
        failure.name === "TimeoutError"
          ? `no answer within ${this.requestTimeoutMs} ms`
          : (failure.cause?.message ?? failure.message);
      return {statusCode: null, error: reason, retryAfter: null, retry: "backoff"};
    }
  }

  /**
   * The API refuses such URLs, but a subscription stored before that rule, or a host name that
   * resolves to a refused address, reaches this point. A name is checked as resolved now; fetch
   * resolves it again, so a resolver that answers differently the second time is not stopped here.
   */
  private async refusedTarget(target: string): Promise<string | null> {
    const url = new URL(target);
    const refused = refusedDestination(url, this.destinations);
    if (refused || this.destinations.allowLinkLocal || isIP(bareHost(url))) return refused;
    // A name that does not resolve fails in fetch with the resolver's own words.
    const addresses = await this.resolveHost(url.hostname).catch(() => []);
    for (const address of addresses) {
      const reason = refusedAddress(address, this.destinations, url.hostname);
      if (reason) return reason;
    }
    return null;
  }

  private async record(
    row: ClaimedDelivery,
    deliveryId: number,
    outcome: Outcome,
    {startedMs, finishedMs}: {startedMs: number; finishedMs: number}
  ): Promise<void> {
    const {journal, outbox, deliveries, logger} = this.options;
    const finishedAt = isoTimestamp(finishedMs);
    const fields = {subscription_id: row.destination, event_id: row.event_id, attempt: row.attempt};
    try {
      await journal.write(() => {
        deliveries.finish(deliveryId, {
          finished_at: finishedAt,
          status_code: outcome.statusCode,
          error: outcome.error,
          duration_ms: finishedMs - startedMs
        });
        if (isSuccess(outcome.statusCode)) return outbox.finish(row.seq, {status: "delivered", error: null});
        if (outcome.retry === "now")
          return outbox.finish(row.seq, {status: "pending", next_attempt_at: finishedAt, error: outcome.error});
        const next =
          outcome.retry === "never"
            ? null
            : nextAttemptAt({
                attempt: row.attempt,
                nowMs: finishedMs,
                createdMs: Date.parse(row.created_at),
                retryAfterMs: retryAfterMs(outcome.retryAfter, finishedMs),
                random: this.random
              });
        if (next === null) {
          journal.afterCommit(() => logger.warn("webhook delivery failed for good", {...fields, error: outcome.error}));
          return outbox.finish(row.seq, {status: "failed", error: outcome.error});
        }
        journal.afterCommit(() =>
          logger.info("webhook delivery failed; will retry", {
            ...fields,
            error: outcome.error,
            next_attempt_at: isoTimestamp(next)
          })
        );
        return outbox.finish(row.seq, {status: "pending", next_attempt_at: isoTimestamp(next), error: outcome.error});
      });
    } catch (error) {
      // The row stays in `sending`, which blocks only its own subscription; the next start hands it back.
      logger.error("could not record a webhook delivery", {...fields, error: error as Error});
    }
  }

  /** 410 Gone: the receiver says the endpoint will never come back, so stop sending to it. */
  private async disableGone(subscriptionId: string): Promise<void> {
    const {subscriptions, journal, outbox, audit, clock, logger} = this.options;
    const subscription = subscriptions.get(subscriptionId);
    if (!subscription?.enabled) return;
    await subscriptions.replace({...subscription, enabled: false, updated_at: isoTimestamp(clock.now())});
    const reason = "subscription disabled: the receiver answered 410 Gone";
    await journal.write(() => {
      const failed = outbox.failOpen(subscriptionId, reason);
      audit.append(
        SYSTEM_ACTOR,
        "webhook.disabled",
        {type: "webhook", id: subscriptionId},
        {reason: "410 Gone", failed_deliveries: failed}
      );
    });
    logger.warn("webhook subscription disabled after 410 Gone", {subscription_id: subscriptionId});
  }

  private arm(): void {
    if (!this.started) return;
    const {journal, outbox} = this.options;
    const due = journal.read(() => outbox.nextDueAt(this.enabledSubscriptions()));
    this.wakeTimer.aim(due === null ? null : Date.parse(due), this.lastPassFailed ? FAILED_PASS_PAUSE_MS : 0);
  }
}
