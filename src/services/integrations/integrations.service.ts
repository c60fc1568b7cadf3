import {isOpen, type NotificationRecord} from "../../domain/notification.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import type {Priority} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import {secretToken, tokensEqual} from "../../lib/tokens.js";
import {newWebhookSecret, signatureOf} from "../../lib/webhook-signing.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import type {GroupsRepository, IntegrationsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {IntegrationAlertsRepository} from "../../store/journal/integration-alerts.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {IdempotencyService, IdempotentRequest} from "../notifications/idempotency.service.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import type {HeartbeatsService} from "../heartbeats/heartbeats.service.js";
import type {InboundAction} from "./integration-payloads.js";
import {AppError, notFound, pageOrInvalidCursor, refuseReadOnlyFields} from "../shared/errors.js";
import {resolveTarget} from "../recipients/paging-target.js";

export type IntegrationKind = IntegrationRecord["kind"];
export const INTEGRATION_KINDS: readonly IntegrationKind[] = ["generic", "alertmanager"];

/** The fields a client may write; `kind` only at creation. */
export interface IntegrationInput {
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority?: Priority;
}

const WRITABLE = ["name", "target", "default_priority"] as const;

/** What the API shows of an integration: never its secret. */
export interface IntegrationView {
  id: string;
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority: Priority;
  /** The keyless address for senders that can neither sign nor set headers. */
  url: string;
  created_at: string;
  updated_at: string;
}

/** What became of one inbound alert. */
export interface EventResult {
  alert_id: string;
  action: InboundAction["action"];
  outcome: "created" | "merged" | "resolved" | "no_open_alert" | "pinged" | "heartbeat_created";
  notification_uuid: string | null;
  heartbeat_status: string | null;
}

/** The signature headers of a signed event (Standard Webhooks, as outbound webhooks are signed). */
export interface SignatureHeaders {
  id?: string;
  timestamp?: string;
  /** `webhook-signature` or, the same value, `X-Service-Signature`. */
  signature?: string;
}

/** Signed events older or newer than this are refused, as receivers of our webhooks are told to do. */
const REPLAY_WINDOW_SECONDS = 300;
// Kept as an idempotency key (the Idempotency-Key header has the same bound).
const WEBHOOK_ID_MAX_LENGTH = 255;

/**
 * Inbound integrations: their admin use cases, their credentials (signature, URL token), and
 * turning their events into notifications, resolutions and heartbeat pings. Every notification
 * they raise goes through the API's send path, with the integration as the actor.
 */
export class IntegrationsService {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly recipients: RecipientsRepository,
    private readonly groups: GroupsRepository,
    private readonly alerts: IntegrationAlertsRepository,
    private readonly notificationRecords: NotificationsRepository,
    private readonly notifications: NotificationsService,
    private readonly heartbeats: HeartbeatsService,
    private readonly journal: Journal,
    private readonly audit: AuditService,
    private readonly idempotency: IdempotencyService,
    private readonly clock: Clock,
    /** The absolute base of integration URLs: settings.public_url, or the address the gateway listens on. */
    private readonly publicBase: () => string
  ) {}

  view(integration: IntegrationRecord): IntegrationView {
    const {id, name, kind, target, default_priority, created_at, updated_at} = integration;
    const url = `${this.publicBase().replace(/\/+$/, "")}/api/v1/integrations/${id}/events?token=${integration.url_token}`;
    return {id, name, kind, target, default_priority, url, created_at, updated_at};
  }

  get(id: string): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!integration) throw notFound("integration", id);
    return integration;
  }

  list(limit: number, cursor: string | null): {items: IntegrationRecord[]; next: string | null} {
    return pageOrInvalidCursor(this.integrations.page(limit, cursor), "integration");
  }

  private checkTarget(target: string): void {
    resolveTarget(target, {recipients: this.recipients, groups: this.groups}, "/target");
  }

  /** Creates an integration; its secret is returned here and never again. */
  async create(input: IntegrationInput, actor: Actor): Promise<{integration: IntegrationRecord; secret: string}> {
    this.checkTarget(input.target);
    const nowMs = this.clock.now();
    const now = isoTimestamp(nowMs);
    const secret = newWebhookSecret();
    const integration: IntegrationRecord = {
      id: newId("int", nowMs),
      name: input.name,
      kind: input.kind,
      target: input.target,
      default_priority: input.default_priority ?? "high",
      secret,
      url_token: secretToken(),
      created_at: now,
      updated_at: now
    };
    await this.integrations.insert(integration);
    await this.audit.record(actor, "integration.created", {type: "integration", id: integration.id}, {name: integration.name, kind: integration.kind, target: integration.target});
    return {integration, secret};
  }

  /** The document a merge patch produces (kind included, unchanged), for the caller to validate before `replace`. */
  patched(id: string, patch: Record<string, unknown>): IntegrationInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const {name, kind, target, default_priority} = this.get(id);
    return applyMergePatch({name, kind, target, default_priority}, patch) as IntegrationInput;
  }

  async replace(id: string, input: IntegrationInput, actor: Actor): Promise<IntegrationRecord> {
    const current = this.get(id);
    this.checkTarget(input.target);
    const updated: IntegrationRecord = {...current, name: input.name, target: input.target, default_priority: input.default_priority ?? "high", updated_at: isoTimestamp(this.clock.now())};
    if (!(await this.integrations.replace(updated))) throw notFound("integration", id);
    await this.audit.record(actor, "integration.updated", {type: "integration", id}, {fields: WRITABLE.filter((field) => current[field] !== updated[field])});
    return updated;
  }

  /**
   * A new secret and URL token; the old ones stop working at once, as after a leak they must.
   * The id, and so the alerts' dedup keys, stay: a sender reconfigured with the new credentials
   * resolves what it fired before.
   */
  async rotateCredentials(id: string, actor: Actor): Promise<{integration: IntegrationRecord; secret: string}> {
    const current = this.get(id);
    const secret = newWebhookSecret();
    const rotated: IntegrationRecord = {...current, secret, url_token: secretToken(), updated_at: isoTimestamp(this.clock.now())};
    if (!(await this.integrations.replace(rotated))) throw notFound("integration", id);
    await this.audit.record(actor, "integration.credentials_rotated", {type: "integration", id}, {name: current.name});
    return {integration: rotated, secret};
  }

  /** Deletes the integration; its credentials stop working at once. Alerts it raised stay as they are. */
  async remove(id: string, actor: Actor): Promise<void> {
    const integration = this.get(id);
    await this.integrations.remove(id);
    await this.audit.record(actor, "integration.deleted", {type: "integration", id}, {name: integration.name});
  }

  /**
   * The integration a correctly signed event is for. The signature is the outbound webhooks' own
   * (HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<raw body>" with the integration's
   * secret); a timestamp more than five minutes off the gateway's clock is refused as a replay.
   */
  authenticateSigned(id: string, headers: SignatureHeaders, rawBody: Buffer): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!headers.id || !headers.timestamp || !headers.signature) throw new AppError("unauthenticated", "a signed event needs the webhook-id, webhook-timestamp and webhook-signature (or X-Service-Signature) headers");
    if (headers.id.length > WEBHOOK_ID_MAX_LENGTH) throw new AppError("unauthenticated", `webhook-id must be at most ${WEBHOOK_ID_MAX_LENGTH} characters`);
    if (!integration) throw new AppError("unauthenticated", "the signature does not match");
    if (!/^\d{1,12}$/.test(headers.timestamp)) throw new AppError("unauthenticated", "webhook-timestamp must be Unix seconds");
    const timestamp = Number(headers.timestamp);
    if (Math.abs(this.clock.now() / 1000 - timestamp) > REPLAY_WINDOW_SECONDS) {
      throw new AppError("unauthenticated", `webhook-timestamp is more than ${REPLAY_WINDOW_SECONDS} seconds from the gateway's clock; a replayed or badly timed event is refused`);
    }
    const expected = signatureOf(integration.secret, headers.id, timestamp, rawBody.toString("utf8"));
    if (!headers.signature.split(" ").some((presented) => tokensEqual(presented, expected))) throw new AppError("unauthenticated", "the signature does not match");
    return integration;
  }

  /** The integration whose keyless URL carries this token. */
  authenticateToken(id: string, token: string): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!integration || !tokensEqual(token, integration.url_token)) throw new AppError("unauthenticated", "the token does not belong to this integration");
    return integration;
  }

  /**
   * Runs an event's actions in order and reports each one's outcome. A repeat of an event
   * already handled (`repeat`: a signed event's webhook-id) answers the first outcomes again and
   * runs nothing: a sender's retry is harmless, and a captured event replayed within the
   * signature's window cannot resolve an alert that fired again since.
   */
  async handle(integration: IntegrationRecord, actions: InboundAction[], actor: Actor, repeat: IdempotentRequest | null): Promise<{results: EventResult[]; replayed: boolean}> {
    const runAll = async () => {
      const results: EventResult[] = [];
      for (const action of actions) results.push(await this.run(integration, action, actor));
      return results;
    };
    if (!repeat) return {results: await runAll(), replayed: false};
    // Stored with the status the route answers, as every remembered answer is.
    const answer = await this.idempotency.runAcross(repeat, async () => ({status: 202, body: await runAll()}));
    return {results: answer.body as EventResult[], replayed: answer.replayed};
  }

  private run(integration: IntegrationRecord, action: InboundAction, actor: Actor): Promise<EventResult> {
    switch (action.action) {
      case "fire":
        return this.fire(integration, action, actor);
      case "resolve":
        return this.resolve(integration, action, actor);
      case "heartbeat":
        return this.heartbeat(integration, action, actor);
    }
  }

  /**
   * Fires, or merges into the alert with the same key until that alert is resolved, even after
   * it was acknowledged: a sender repeating a firing alert (Alertmanager does, every
   * repeat_interval) must not page people who are already on it. A repeat of an open alert at a
   * higher severity goes through the send path, which raises the alert and pages at once.
   */
  private async fire(integration: IntegrationRecord, action: Extract<InboundAction, {action: "fire"}>, actor: Actor): Promise<EventResult> {
    const dedupKey = alertKey(integration, action.alert_id);
    const source = action.source ?? integration.name;
    const result = (outcome: EventResult["outcome"], id: string): EventResult => ({alert_id: action.alert_id, action: "fire", outcome, notification_uuid: id, heartbeat_status: null});
    const existing = this.journal.read(() => this.alerts.latestUnresolved(dedupKey));
    if (existing && !isOpen(existing.status)) {
      const absorbed = await this.journal.write(() => {
        const current = this.alerts.latestUnresolved(dedupKey);
        if (!current || isOpen(current.status)) return null;
        // Not open (acknowledged or exhausted): the merge counts the repeat and raises nothing.
        this.notifications.merges.merge(this.notificationRecords.get(current.id) as NotificationRecord, {dedup_key: dedupKey, priority: action.priority, source}, actor, this.clock.now());
        return current.id;
      });
      if (absorbed) return result("merged", absorbed);
    }
    const outcome = await this.notifications.send(
      {recipient_uuid: integration.target, message: action.message, priority: action.priority, source, dedup_key: dedupKey, ...optional(action)},
      actor
    );
    return result(outcome.kind, outcome.view.id);
  }

  private async resolve(integration: IntegrationRecord, action: Extract<InboundAction, {action: "resolve"}>, actor: Actor): Promise<EventResult> {
    const existing = this.journal.read(() => this.alerts.latestUnresolved(alertKey(integration, action.alert_id)));
    if (!existing) return {alert_id: action.alert_id, action: "resolve", outcome: "no_open_alert", notification_uuid: null, heartbeat_status: null};
    await this.notifications.resolve(existing.id, actor);
    return {alert_id: action.alert_id, action: "resolve", outcome: "resolved", notification_uuid: existing.id, heartbeat_status: null};
  }

  private async heartbeat(integration: IntegrationRecord, action: Extract<InboundAction, {action: "heartbeat"}>, actor: Actor): Promise<EventResult> {
    const pinged = await this.heartbeats.pingOrCreate(action.alert_id, action.period_seconds, integration, actor);
    return {alert_id: action.alert_id, action: "heartbeat", outcome: pinged.created ? "heartbeat_created" : "pinged", notification_uuid: null, heartbeat_status: pinged.status};
  }
}

/** An alert's dedup key, scoped to its integration so two senders' ids never collide. */
function alertKey(integration: IntegrationRecord, alertId: string): string {
  return `${integration.id}:${alertId}`;
}

function optional(action: Extract<InboundAction, {action: "fire"}>): {link?: string; service?: string; environment?: string} {
  return Object.fromEntries(Object.entries({link: action.link, service: action.service, environment: action.environment}).filter(([, value]) => value !== null));
}
