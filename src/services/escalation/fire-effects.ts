import type {EscalationEffect} from "../../domain/escalation/index.js";
import type {AttemptRecord, NotificationRecord} from "../../domain/notification.js";
import type {MemberPolicy, PolicySnapshot} from "../../domain/policy.js";
import {maskContact} from "../../domain/recipient.js";
import {CHANNELS, type Channel} from "../../domain/vocabulary.js";
import {isoTimestamp} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {Journal} from "../../store/journal/journal.js";
import type {AttemptsRepository} from "../../store/journal/attempts.repository.js";
import {SYSTEM_ACTOR} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {QueuedAttempt} from "./channel-queue.js";
import type {EventPublisher} from "../notifications/event-publisher.js";
import {alertSummary, attemptView} from "../notifications/notification-view.js";
import type {AlertSummary} from "../../channels/channel.js";

export interface FireEffectsDeps {
  notificationRecords: NotificationsRepository;
  attempts: AttemptsRepository;
  events: EventPublisher;
  audit: AuditService;
}

/** The wake-up whose effects are carried out: the alert, its policy snapshot, its plan's length, the time. */
export interface WakeUp {
  record: NotificationRecord;
  policy: PolicySnapshot;
  stepsTotal: number;
  nowMs: number;
  /** Given, each contact also names the person's other open alerts (`QueuedAttempt.alsoOpen`). */
  namesOpen?: OpenAlertsOfPerson | null;
}

// A page names at most this many of the person's other open alerts: what a written page lists one by one (storm-listing.ts).
const MAX_ALSO_OPEN = 50;

type ContactEffect = Extract<EscalationEffect, {type: "attempt" | "skip" | "defer"}>;

/**
 * Carries out one wake-up's effects inside the runner's transaction, in the planner's causal
 * order: each contact recorded as it happens (a skip announced as `contact.failed`), then a
 * policy's level starting as `escalation.level`, the carried step as `escalation.step` with its number and targets, then `notification.sent` for
 * each contact handed to its channel, and last the chain's end. Each event shows the
 * notification as it is at that moment. Returns the attempts to hand to the channel queues
 * once the transaction has committed.
 */
export class FireEffects {
  private current: NotificationRecord;
  private readonly now: string;
  private readonly members: Map<string, MemberPolicy>;
  private readonly dispatch: Array<{channel: Channel; queued: QueuedAttempt}> = [];
  private readonly handedOver: AttemptRecord[] = [];

  private readonly record: NotificationRecord;
  private readonly policy: PolicySnapshot;
  private readonly stepsTotal: number;
  private readonly nowMs: number;
  private readonly namesOpen: OpenAlertsOfPerson | null;

  constructor(
    private readonly deps: FireEffectsDeps,
    {record, policy, stepsTotal, nowMs, namesOpen = null}: WakeUp
  ) {
    this.record = record;
    this.policy = policy;
    this.stepsTotal = stepsTotal;
    this.nowMs = nowMs;
    this.namesOpen = namesOpen;
    this.current = record;
    this.now = isoTimestamp(nowMs);
    this.members = new Map(policy.members.map((member) => [member.recipient_uuid, member]));
  }

  apply(effects: EscalationEffect[]): Array<{channel: Channel; queued: QueuedAttempt}> {
    for (const effect of effects) {
      if (effect.type === "attempt" || effect.type === "skip" || effect.type === "defer") this.contact(effect);
      else if (effect.type === "level") this.levelStarted(effect.level, effect.run);
      else if (effect.type === "step") this.stepCarried(effect.step);
      else if (effect.type === "exhausted") this.exhausted();
    }
    return this.dispatch;
  }

  private contact(effect: ContactEffect): void {
    this.setStatus("notifying");
    const attempt = this.attemptRow(effect);
    this.deps.attempts.insert(attempt);
    const member = this.members.get(effect.recipient_uuid);
    const recipient = {
      uuid: effect.recipient_uuid,
      name: member?.name ?? effect.recipient_uuid,
      ...(member?.time_zone ? {timeZone: member.time_zone} : {})
    };
    const alert = alertSummary(this.current);
    if (effect.type === "attempt") {
      const alsoOpen = this.namesOpen?.of(effect.recipient_uuid, this.record.id);
      this.dispatch.push({
        channel: effect.channel,
        queued: {attemptId: attempt.id, recipient, contact: effect.contact, alert, alsoOpen}
      });
      this.handedOver.push(attempt);
      return;
    }
    if (effect.type === "skip") this.emit("contact.failed", attempt);
  }

  private stepCarried(step: number): void {
    const targets = this.handedOver.map(({recipient_uuid, channel, target}) => ({recipient_uuid, channel, target}));
    this.deps.events.emitFor("escalation.step", this.current, this.nowMs, {step: {number: step + 1, targets}});
    for (const attempt of this.handedOver.splice(0)) this.emit("notification.sent", attempt);
  }

  private levelStarted(level: number, run: number): void {
    const frozen = this.policy.levels?.[level - 1];
    if (!frozen) return;
    const targets = frozen.targets.map(({recipients: _recipients, ...target}) => target);
    const paged = [...new Set(this.handedOver.map((attempt) => attempt.recipient_uuid))];
    this.deps.events.emitFor("escalation.level", this.current, this.nowMs, {
      level: {number: level, run, targets, paged}
    });
  }

  private exhausted(): void {
    this.setStatus("exhausted");
    this.deps.audit.append(
      SYSTEM_ACTOR,
      "notification.exhausted",
      {type: "notification", id: this.record.id, source: this.record.source},
      {steps: this.stepsTotal}
    );
    this.deps.events.emitFor("escalation.exhausted", this.current, this.nowMs);
  }

  private setStatus(status: "notifying" | "exhausted"): void {
    if (this.current.status === status || (status === "notifying" && this.current.status !== "queued")) return;
    this.current = {...this.current, status, updated_at: this.now};
    this.deps.notificationRecords.saveState(this.current);
  }

  private emit(type: "contact.failed" | "notification.sent", attempt: AttemptRecord): void {
    this.deps.events.emitFor(type, this.current, this.nowMs, {attempt: attemptView(attempt)});
  }

  private attemptRow(effect: ContactEffect): AttemptRecord {
    const finished = effect.type !== "attempt";
    return {
      id: newId("att", this.nowMs),
      notification_id: this.record.id,
      channel: effect.channel,
      recipient_uuid: effect.recipient_uuid,
      target: effect.contact ? maskContact(effect.contact) : "",
      step: effect.step,
      started_at: this.now,
      finished_at: finished ? this.now : null,
      outcome: effect.type === "attempt" ? "pending" : effect.type === "skip" ? "skipped" : "deferred",
      error:
        effect.type === "skip"
          ? effect.reason
          : effect.type === "defer"
            ? `quiet hours until ${new Date(effect.until).toISOString()}`
            : null
    };
  }
}

/**
 * A person's open alerts that reached them, the most recently paged first, as a storm's page
 * names them. Read once per transaction and person (`Journal.cacheEpoch`): a storm's newcomers
 * fired together would otherwise each read every open alert, a cost growing with the square of
 * the storm. Alerts paged earlier in the same transaction are not among them; to the same contact
 * they travel in the same delivery anyway.
 */
export class OpenAlertsOfPerson {
  private epoch = -1;
  private readonly byRecipient = new Map<string, AlertSummary[]>();

  constructor(
    private readonly journal: Journal,
    private readonly records: NotificationsRepository
  ) {}

  /** Reads the journal: call inside a journal transaction. */
  of(recipientUuid: string, exceptId: string): AlertSummary[] {
    if (this.epoch !== this.journal.cacheEpoch) {
      this.epoch = this.journal.cacheEpoch;
      this.byRecipient.clear();
    }
    let alerts = this.byRecipient.get(recipientUuid);
    if (!alerts) {
      alerts = this.records.openSentTo(recipientUuid, CHANNELS, MAX_ALSO_OPEN + 1).map(alertSummary);
      this.byRecipient.set(recipientUuid, alerts);
    }
    return alerts.filter((alert) => alert.notification_id !== exceptId).slice(0, MAX_ALSO_OPEN);
  }
}
