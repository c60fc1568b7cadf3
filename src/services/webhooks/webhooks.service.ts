import {applyMergePatch} from "../../domain/merge-patch.js";
import {newId} from "../../lib/ids.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newWebhookSecret, type SigningSecrets} from "../../lib/webhook-signing.js";
import {refusedDestination, STRICT_DESTINATIONS, type DestinationPolicy} from "../../lib/webhook-destination.js";
import type {WebhookRecord} from "../../store/config/config-store.js";
import type {WebhooksRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {OutboxRepository} from "../../store/journal/outbox.repository.js";
import type {WebhookDeliveriesRepository, WebhookDelivery} from "../../store/journal/webhook-deliveries.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import {
  AppError,
  invalid,
  notFound,
  pageOrInvalidCursor,
  refuseReadOnlyFields,
  type FieldError
} from "../shared/errors.js";

/** A subscription as stored: the config record plus its secret-rotation window. */
export type Subscription = WebhookRecord & SigningSecrets;

/** The fields a client may write. */
export interface WebhookInput {
  url: string;
  events: string[];
  enabled?: boolean;
}

const WRITABLE: (keyof WebhookInput)[] = ["url", "events", "enabled"];
/** Subscribes to every event type, including ones added later. */
export const ALL_EVENTS = "*";
// Long enough for a receiver fleet to deploy the new secret; the spec's rotation lets both verify meanwhile.
const ROTATION_GRACE_MS = 24 * 3_600_000;

/** What the API shows of a subscription: never a secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** While set (and in the future), deliveries are signed with the previous secret too. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Business checks a JSON Schema cannot express. */
function checkWebhook(input: WebhookInput, policy: DestinationPolicy): FieldError[] {
  const errors: FieldError[] = [];
  let url: URL | null = null;
  try {
    url = new URL(input.url);
  } catch {
    errors.push({pointer: "/url", detail: "must be an absolute URL"});
  }
  if (url && url.protocol !== "http:" && url.protocol !== "https:")
    errors.push({pointer: "/url", detail: "must be an http or https URL"});
  const refused = url && refusedDestination(url, policy);
  if (refused) errors.push({pointer: "/url", detail: refused});
  if (input.events.includes(ALL_EVENTS) && input.events.length > 1)
    errors.push({pointer: "/events", detail: `"${ALL_EVENTS}" already means every event; list it alone`});
  return errors;
}

/** What WebhooksService works with, by name. */
export interface WebhooksDeps {
  subscriptions: WebhooksRepository;
  journal: Journal;
  outbox: OutboxRepository;
  deliveries: WebhookDeliveriesRepository;
  audit: AuditService;
  clock: Clock;
  /** Told when rows became due outside an event emission (redelivery, a subscription enabled again). */
  onQueued: () => void;
  destinations?: DestinationPolicy;
}

/** Outbound webhook subscriptions, their deliveries log and manual redelivery. */
export class WebhooksService {
  constructor(private readonly deps: WebhooksDeps) {}

  view(subscription: Subscription): WebhookView {
    const {id, url, events, enabled, created_at, updated_at} = subscription;
    return {
      id,
      url,
      events,
      enabled,
      previous_secret_expires_at: subscription.previous_secret_expires_at ?? null,
      created_at,
      updated_at
    };
  }

  get(id: string): Subscription {
    const subscription = this.deps.subscriptions.get(id);
    if (!subscription) throw notFound("webhook", id);
    return subscription;
  }

  list(limit: number, cursor: string | null): {items: Subscription[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.subscriptions.page(limit, cursor), "webhook");
  }

  /** Creates a subscription; the secret is returned here and never again. */
  async create(input: WebhookInput, actor: Actor): Promise<{subscription: Subscription; secret: string}> {
    const errors = checkWebhook(input, this.deps.destinations ?? STRICT_DESTINATIONS);
    if (errors.length) throw invalid(errors);
    const nowMs = this.deps.clock.now();
    const now = isoTimestamp(nowMs);
    const secret = newWebhookSecret();
    const subscription: Subscription = {
      id: newId("whk", nowMs),
      url: input.url,
      events: [...input.events],
      enabled: input.enabled ?? true,
      secret,
      created_at: now,
      updated_at: now
    };
    await this.deps.subscriptions.insert(subscription);
    await this.deps.audit.record(
      actor,
      "webhook.created",
      {type: "webhook", id: subscription.id},
      {url: subscription.url, events: subscription.events, enabled: subscription.enabled}
    );
    return {subscription, secret};
  }

  /** The document a merge patch produces, for the caller to validate before `replace`. */
  patched(id: string, patch: Record<string, unknown>): WebhookInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const {url, events, enabled} = this.get(id);
    return applyMergePatch({url, events, enabled}, patch) as WebhookInput;
  }

  async replace(id: string, input: WebhookInput, actor: Actor): Promise<Subscription> {
    const errors = checkWebhook(input, this.deps.destinations ?? STRICT_DESTINATIONS);
    if (errors.length) throw invalid(errors);
    const current = this.get(id);
    const updated: Subscription = {
      ...current,
      url: input.url,
      events: [...input.events],
      enabled: input.enabled ?? true,
      updated_at: isoTimestamp(this.deps.clock.now())
    };
    if (!(await this.deps.subscriptions.replace(updated))) throw notFound("webhook", id);
    await this.deps.audit.record(
      actor,
      "webhook.updated",
      {type: "webhook", id},
      {fields: WRITABLE.filter((field) => JSON.stringify(current[field]) !== JSON.stringify(updated[field]))}
    );
    // Deliveries paused while it was disabled resume, in order.
    if (updated.enabled && !current.enabled) this.deps.onQueued();
    return updated;
  }

  /** Deletes the subscription; whatever it still had to deliver is given up. */
  async remove(id: string, actor: Actor): Promise<void> {
    const subscription = this.get(id);
    await this.deps.subscriptions.remove(id);
    await this.deps.journal.write(() => {
      const failed = this.deps.outbox.failOpen(id, "subscription deleted");
      this.deps.audit.append(
        actor,
        "webhook.deleted",
        {type: "webhook", id},
        {url: subscription.url, failed_deliveries: failed}
      );
    });
  }

  /**
   * Issues a new secret, returned here only. The old one keeps signing alongside it for 24 hours
   * (two space-separated signatures, as Standard Webhooks allows), so receivers can switch without
   * rejecting a delivery.
   */
  async rotateSecret(id: string, actor: Actor): Promise<{subscription: Subscription; secret: string}> {
    const current = this.get(id);
    const nowMs = this.deps.clock.now();
    const secret = newWebhookSecret();
    const expiresAt = isoTimestamp(nowMs + ROTATION_GRACE_MS);
    const rotated: Subscription = {
      ...current,
      secret,
      previous_secret: current.secret,
      previous_secret_expires_at: expiresAt,
      updated_at: isoTimestamp(nowMs)
    };
    if (!(await this.deps.subscriptions.replace(rotated))) throw notFound("webhook", id);
    await this.deps.audit.record(
      actor,
      "webhook.secret_rotated",
      {type: "webhook", id},
      {previous_secret_expires_at: expiresAt}
    );
    return {subscription: rotated, secret};
  }

  /** The subscription's delivery attempts, newest first. */
  listDeliveries(
    id: string,
    limit: number,
    cursor: number | null
  ): {items: WebhookDelivery[]; next_cursor: string | null} {
    this.get(id);
    const rows = this.deps.journal.read(() => this.deps.deliveries.list(id, limit + 1, cursor));
    const items = rows.slice(0, limit);
    return {items, next_cursor: rows.length > limit ? String(items[items.length - 1].id) : null};
  }

  /** Queues the delivery's event again for its subscription, behind anything already waiting for it. */
  async redeliver(
    id: string,
    deliveryId: number,
    actor: Actor
  ): Promise<{subscription_id: string; event_id: string; queued_at: string}> {
    const subscription = this.get(id);
    if (!subscription.enabled)
      throw new AppError("conflict", `webhook ${id} is disabled; enable it before redelivering`);
    const now = isoTimestamp(this.deps.clock.now());
    const eventId = await this.deps.journal.write(() => {
      const delivery = this.deps.deliveries.get(id, deliveryId);
      if (!delivery) throw notFound("delivery", `${deliveryId} of webhook ${id}`);
      this.deps.outbox.requeue(id, delivery.event_id, now);
      this.deps.audit.append(
        actor,
        "webhook.redelivery_queued",
        {type: "webhook", id},
        {delivery_id: deliveryId, event_id: delivery.event_id}
      );
      return delivery.event_id;
    });
    this.deps.onQueued();
    return {subscription_id: id, event_id: eventId, queued_at: now};
  }
}
