import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {Journal} from "../store/journal/journal.js";
import type {ConfigStore} from "../store/config/config-store.js";
import {WebhooksRepository} from "../store/config/repositories.js";
import {OutboxRepository} from "../store/journal/outbox.repository.js";
import {WebhookDeliveriesRepository} from "../store/journal/webhook-deliveries.repository.js";
import type {AuditService} from "../services/shared/audit.service.js";
import {WebhooksService} from "../services/webhooks/webhooks.service.js";
import {WebhookDispatcher} from "./webhook-dispatcher.js";
import type {DestinationPolicy} from "../lib/webhook-destination.js";

/** What the webhooks feature is built from; `random`, `requestTimeoutMs` and `resolveHost` are for tests. */
export interface WebhooksDependencies {
  journal: Journal;
  config: ConfigStore;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
  random?: () => number;
  requestTimeoutMs?: number;
  /** From the `webhooks` settings; strict when left out. */
  destinations?: DestinationPolicy;
  resolveHost?: (hostname: string) => Promise<string[]>;
}

/** The webhooks feature: the admin use cases and the background sender of the outbox. */
export interface Webhooks {
  service: WebhooksService;
  dispatcher: WebhookDispatcher;
}

export function createWebhooks(deps: WebhooksDependencies): Webhooks {
  const subscriptions = new WebhooksRepository(deps.config);
  const outbox = new OutboxRepository(deps.journal);
  const deliveries = new WebhookDeliveriesRepository(deps.journal);
  const dispatcher = new WebhookDispatcher({
    journal: deps.journal,
    outbox,
    deliveries,
    subscriptions,
    audit: deps.audit,
    clock: deps.clock,
    logger: deps.logger.child({component: "webhooks"}),
    random: deps.random,
    requestTimeoutMs: deps.requestTimeoutMs,
    destinations: deps.destinations,
    resolveHost: deps.resolveHost
  });
  const service = new WebhooksService({
    subscriptions,
    journal: deps.journal,
    outbox,
    deliveries,
    audit: deps.audit,
    clock: deps.clock,
    onQueued: () => dispatcher.nudge(),
    destinations: deps.destinations
  });
  return {service, dispatcher};
}
