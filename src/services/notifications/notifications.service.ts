import {
  acknowledge,
  freshProgress,
  resolve,
  type Acknowledgement,
  type EscalationRecord,
  type NotificationRecord
} from "../../domain/notification.js";
import {leftOutChannels, plannedChannels} from "../../domain/policy.js";
import {countSteps} from "../../domain/escalation/index.js";
import type {EventType, NotificationStatus, Priority} from "../../domain/vocabulary.js";
import {newId} from "../../lib/ids.js";
import type {AckVia} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {EventPublisher} from "./event-publisher.js";
import type {AuditService} from "../shared/audit.service.js";
import type {IdempotencyService, IdempotentRequest} from "./idempotency.service.js";
import {sendAnswer, type AnswerForm, type SendOutcome, type SendResult} from "./send-outcome.js";
import {heldBy, longForm, type NotificationView, type NotificationViews} from "./notification-view.js";
import type {StormGrouping} from "./storm-grouping.js";
import {AppError, invalid, notFound} from "../shared/errors.js";
import type {PagingPolicies} from "../recipients/paging-policies.js";
import {DedupMerge} from "./dedup-merge.js";
import {Suppressions} from "./suppressions.js";
import type {AlertOrigin, MaintenanceWindow} from "../../domain/maintenance.js";
import type {MaintenanceWindowsRepository} from "../../store/journal/maintenance-windows.repository.js";

/** A validated send request (spec 2.1 plus CONTRACT section 1's optional fields). */
export interface SendInput {
  recipient_uuid: string;
  message: string;
  priority: Priority;
  source?: string;
  dedup_key?: string;
  link?: string;
  service?: string;
  environment?: string;
  /** Set by a heartbeat's down page, never by the API: the heartbeat, which a maintenance window may name. */
  heartbeat?: string;
}

/** An Idempotency-Key's send: the key, and the form its answer takes (stored for repeats). */
export interface IdempotentSend {
  request: IdempotentRequest;
  form: AnswerForm;
}

export interface ListFilter {
  status?: NotificationStatus;
  recipient_uuid?: string;
  priority?: Priority;
  cursor?: string;
  limit: number;
}

/** What the notifications service works with, by name. */
export interface NotificationsDeps {
  journal: Journal;
  notifications: NotificationsRepository;
  escalations: EscalationsRepository;
  events: EventPublisher;
  views: NotificationViews;
  policies: PagingPolicies;
  audit: AuditService;
  idempotency: IdempotencyService;
  storms: StormGrouping;
  windows: MaintenanceWindowsRepository;
  clock: Clock;
}

const CURSOR_PATTERN = /^notif_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The owner of the alert lifecycle: accepting (with dedup merges and maintenance holds),
 * releasing, acknowledging and resolving notifications, and reading them. Every change it makes
 * commits with its audit entry and its event; it calls no one back. The escalation runner carries
 * the chains it starts: it learns of new and stopped chains from the journal
 * (`EscalationsRepository.watch`), and calls this service, one way, to acknowledge what a person
 * acknowledged during a delivery.
 */
export class NotificationsService {
  private readonly journal: Journal;
  private readonly notifications: NotificationsRepository;
  private readonly escalations: EscalationsRepository;
  private readonly events: EventPublisher;
  private readonly views: NotificationViews;
  private readonly policies: PagingPolicies;
  private readonly audit: AuditService;
  private readonly idempotency: IdempotencyService;
  private readonly storms: StormGrouping;
  private readonly clock: Clock;

  constructor(deps: NotificationsDeps) {
    ({
      journal: this.journal,
      notifications: this.notifications,
      escalations: this.escalations,
      events: this.events,
      views: this.views,
      policies: this.policies
    } = deps);
    ({audit: this.audit, idempotency: this.idempotency, storms: this.storms, clock: this.clock} = deps);
    const {policies} = deps;
    this.merges = new DedupMerge({
      ...deps,
      policy: (uuid, priority, nowMs) => policies.snapshot(policies.targetOf(uuid), priority, nowMs)
    });
    this.suppressions = new Suppressions({
      ...deps,
      policy: (uuid, priority, nowMs) => policies.current(uuid, priority, nowMs)
    });
  }

  /** Holding alerts during maintenance windows and releasing them, inside the caller's journal transaction. */
  readonly suppressions: Suppressions;

  /** Every dedup merge goes through this, inside the caller's journal transaction. */
  readonly merges: DedupMerge;

  /** The long form as the journal has it now; call inside a journal transaction or read. */
  view(record: NotificationRecord): NotificationView {
    return this.views.of(record);
  }

  /**
   * Accepts an alert. The notification, its escalation snapshot, its audit entry, its event with
   * outbox rows and, under an Idempotency-Key, the answer for repeats are one journal
   * transaction: when this resolves, all of them are durable, and on any failure none of them
   * exist. Returns what the send did; the edge answers with `sendAnswer` of it.
   */
  send(input: SendInput, actor: Actor): Promise<SendOutcome>;
  send(input: SendInput, actor: Actor, idempotent: IdempotentSend | null): Promise<SendResult>;
  async send(input: SendInput, actor: Actor, idempotent: IdempotentSend | null = null): Promise<SendResult> {
    if (!idempotent) return this.journal.write(() => this.accept(input, actor));
    const done = await this.idempotency.run(idempotent.request, () => {
      const outcome = this.accept(input, actor);
      return {value: outcome, answer: sendAnswer(outcome, idempotent.form)};
    });
    return done.replayed ? {kind: "replayed", answer: done.answer} : done.value;
  }

  /**
   * The send's write function, inside the caller's journal transaction. A new chain, or one a merge
   * re-planned, is due now: the runner hears of it after the commit. `recovered`: an alert a former
   * active accepted, kept under its id and acceptance time.
   */
  accept(input: SendInput, actor: Actor, recovered?: {id: string; acceptedAtMs: number}): SendOutcome {
    const target = this.policies.targetOf(input.recipient_uuid);
    const nowMs = recovered?.acceptedAtMs ?? this.clock.now();
    const now = isoTimestamp(nowMs);
    if (input.dedup_key) {
      const open = this.notifications.findOpenByDedup(input.recipient_uuid, input.dedup_key);
      if (open) {
        const merged = this.merges.merge(
          open,
          {dedup_key: input.dedup_key, priority: input.priority, source: input.source ?? null},
          actor,
          nowMs
        );
        return {kind: "merged", view: this.view(merged)};
      }
    }
    const policy = this.policies.snapshot(target, input.priority, nowMs);
    const origin = originOf(input, actor);
    const window = this.suppressions.windowFor(origin, nowMs);
    const record: NotificationRecord = {
      id: recovered?.id ?? newId("notif", nowMs),
      status: window ? "suppressed" : "queued",
      target_uuid: input.recipient_uuid,
      target_kind: target.kind,
      message: input.message.trim(),
      priority: input.priority,
      source: input.source ?? null,
      dedup_key: input.dedup_key ?? null,
      link: input.link ?? null,
      service: input.service ?? null,
      environment: input.environment ?? null,
      occurrences: 1,
      channels_planned: plannedChannels(policy),
      escalation_chain_id: newId("esc", nowMs),
      created_at: now,
      updated_at: now,
      acknowledged_at: null,
      acknowledged_by: null,
      acknowledged_via: null,
      ack_note: null,
      resolved_at: null,
      api_key_id: actor.type === "api_key" ? actor.id : null
    };
    const fresh: EscalationRecord = {
      id: record.escalation_chain_id,
      notification_id: record.id,
      step: 0,
      steps_total: countSteps(policy),
      next_step_at: window ? null : now,
      generation: 0,
      state: window ? "stopped" : "running",
      grouped_with: null,
      progress: freshProgress(),
      waiting_for: null
    };
    // A held alert's chain is stored stopped, with its policy: its release starts it afresh.
    const escalation = window ? fresh : this.storms.atAcceptance(fresh, policy, record.priority, nowMs);
    this.notifications.insert(record);
    this.escalations.insert(escalation, policy);
    this.audit.append(
      actor,
      "notification.accepted",
      {type: "notification", id: record.id, source: record.source},
      {target: record.target_uuid, priority: record.priority, dedup_key: record.dedup_key}
    );
    // Built from the rows just written rather than read back: a new notification has no attempts.
    const view = longForm(record, escalation, [], {leftOut: leftOutChannels(policy)});
    if (window) {
      const held = {...view, maintenance_window: heldBy(window)};
      this.suppressions.hold(held, {window, origin}, actor, nowMs);
      return {kind: "created", view: held};
    }
    this.events.emitFirst("escalation.started", view, nowMs);
    return {kind: "created", view};
  }

  /**
   * Ends what a maintenance window held, inside the caller's journal transaction: alerts that may
   * still be firing page from their first step once this commits.
   */
  releaseHeld(window: MaintenanceWindow, nowMs: number): number {
    return this.suppressions.releaseHeld(window, nowMs);
  }

  /**
   * Records `notification.undeliverable` for an alert the paging auditor found with no page
   * carried in time (docs/reliability.md); called inside the auditor's write. It pages nobody.
   */
  announceUndeliverable(id: string, reason: string, nowMs: number): void {
    const record = this.notifications.get(id);
    if (!record) return;
    this.events.emitFor("notification.undeliverable", record, nowMs, {
      undeliverable: {reason, found_by: "paging_auditor"}
    });
  }

  get(id: string): NotificationView {
    const record = this.journal.read(() => this.notifications.get(id));
    if (!record) throw notFound("notification", id);
    return this.journal.read(() => this.view(record));
  }

  /** The zone `recipientUuid` reads the alert's times in, as frozen with its policy (policy.ts `time_zone`); null: the box's. */
  readingZone(id: string, recipientUuid: string): string | null {
    const policy = this.journal.read(() => this.escalations.policyOf(id));
    return policy?.members.find((member) => member.recipient_uuid === recipientUuid)?.time_zone ?? null;
  }

  list(filter: ListFilter): {items: NotificationView[]; next_cursor: string | null} {
    if (filter.cursor !== undefined && !CURSOR_PATTERN.test(filter.cursor))
      throw invalid([{pointer: "/cursor", detail: "not a cursor returned by this endpoint"}]);
    const records = this.journal.read(() =>
      this.notifications.list({
        status: filter.status,
        target_uuid: filter.recipient_uuid,
        priority: filter.priority,
        before_id: filter.cursor,
        limit: filter.limit + 1
      })
    );
    const page = records.slice(0, filter.limit);
    return {
      items: this.journal.read(() => page.map((record) => this.view(record))),
      next_cursor: records.length > filter.limit ? page[page.length - 1].id : null
    };
  }

  /** Acknowledges each notification a grouped delivery spoke about; closed ones are left as they are. */
  async acknowledgeMany(ids: string[], by: string | null, via: AckVia, actor: Actor): Promise<void> {
    // Concurrent on purpose: the acknowledgements share group commits instead of one fsync each.
    await Promise.all(
      ids.map((id) =>
        this.acknowledge(id, {by, note: null, via}, actor).catch((error) => {
          if (!(error instanceof AppError && error.code === "conflict")) throw error;
        })
      )
    );
  }

  acknowledge(id: string, ack: Acknowledgement, actor: Actor): Promise<NotificationView> {
    return this.journal.write(() => this.close(id, actor, {ack, nowIso: isoTimestamp(this.clock.now())}).view);
  }

  /**
   * Changes the text of an alert not yet resolved, pages nobody: what a device learns about an
   * alert it already paged (a PLC point found chattering). The audit keeps the text before.
   */
  retitle(id: string, change: (message: string) => string, actor: Actor): Promise<void> {
    return this.journal.write(() => {
      const record = this.notifications.get(id);
      const message = record ? change(record.message) : "";
      if (!record || record.status === "resolved" || record.message === message) return;
      this.notifications.retitle(id, message, isoTimestamp(this.clock.now()));
      this.audit.append(
        actor,
        "notification.retitled",
        {type: "notification", id, source: record.source},
        {from: record.message, to: message}
      );
    });
  }

  resolve(id: string, actor: Actor): Promise<NotificationView> {
    return this.journal.write(() => this.close(id, actor, {ack: null, nowIso: isoTimestamp(this.clock.now())}).view);
  }

  /**
   * Acknowledges (with `ack`) or resolves, inside the caller's journal transaction, as of `nowIso`:
   * the new state, the stopped chain (its generation bumped so a wake-up already scheduled does
   * nothing), the audit entry and the event commit together, so no attempt can start after it.
   */
  close(
    id: string,
    actor: Actor,
    {ack, nowIso}: {ack: Acknowledgement | null; nowIso: string}
  ): {view: NotificationView; changed: boolean} {
    const record = this.notifications.get(id);
    if (!record) throw notFound("notification", id);
    const result = ack ? acknowledge(record, ack, nowIso) : resolve(record, nowIso);
    if (result.kind === "conflict") throw new AppError("conflict", result.reason);
    if (result.kind === "unchanged") return {view: this.view(result.record), changed: false};
    const event: EventType = ack ? "notification.acknowledged" : "notification.resolved";
    this.notifications.saveState(result.record);
    this.escalations.stop(id, nowIso);
    const detail = ack ? {by: ack.by, via: ack.via} : {};
    this.audit.append(
      actor,
      event,
      {type: "notification", id, source: record.source},
      {...detail, from: record.status}
    );
    const changed = this.view(result.record);
    this.events.emit(event, changed, this.clock.now());
    return {view: changed, changed: true};
  }
}

/** What a maintenance window may name of a send: its target and source, the integration it came through, its heartbeat. */
function originOf(input: SendInput, actor: Actor): AlertOrigin {
  return {
    target: input.recipient_uuid,
    source: input.source ?? null,
    integration: actor.type === "integration" ? actor.id : null,
    heartbeat: input.heartbeat ?? null
  };
}
