import {rmSync} from "node:fs";
import {join} from "node:path";
import {Journal} from "../../src/store/journal/journal.js";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {WebhooksRepository} from "../../src/store/config/repositories.js";
import {AuditRepository} from "../../src/store/journal/audit.repository.js";
import type {Actor} from "../../src/domain/actor.js";
import {EventsRepository} from "../../src/store/journal/events.repository.js";
import {AuditService} from "../../src/services/shared/audit.service.js";
import {createWebhooks} from "../../src/outbox/index.js";
import {isoTimestamp, ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {newId} from "../../src/lib/ids.js";
import type {EventType} from "../../src/domain/vocabulary.js";
import {tempDir} from "./gateway.js";
import {startWebhookReceiver, type WebhookReceiver} from "./webhook-receiver.js";

const logger = createLogger("error", () => undefined);
export const admin: Actor = {type: "api_key", id: "testkey1"};
const cleanups: Array<() => Promise<void> | void> = [];

/** Stops every rig started since the last call, newest first: call from afterEach. */
export async function stopWebhookRigs(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A journal and config store in a temp dir, the webhooks feature on a manual clock set to real time, and a receiver. */
export async function startWebhookRig(requestTimeoutMs = 300, resolveHost?: (hostname: string) => Promise<string[]>) {
  const logLines: string[] = [];
  const dir = tempDir();
  // The stock verifier checks timestamps against its own clock: start from real time.
  const clock = new ManualClock(Date.now());
  const journal = new Journal({path: join(dir, "journal.sqlite"), logger, checkpointIntervalMs: 60_000});
  const config = await ConfigStore.open(join(dir, "config.json"));
  const audit = new AuditService(journal, new AuditRepository(journal), clock);
  const webhooks = createWebhooks({
    journal,
    config,
    audit,
    clock,
    logger: createLogger("info", (line) => logLines.push(line)),
    random: () => 0.5,
    requestTimeoutMs,
    resolveHost
  });
  const receiver = await startWebhookReceiver(clock);
  cleanups.push(
    () => rmSync(dir, {recursive: true, force: true}),
    () => journal.close(),
    () => receiver.close(),
    () => webhooks.dispatcher.stop()
  );
  const events = new EventsRepository(journal);
  const subscriptions = new WebhooksRepository(config);

  /** Commits an event the way NotificationsService.emit does: the event and its outbox rows together. */
  const emit = (type: EventType = "escalation.started") =>
    journal.write(() => {
      const now = isoTimestamp(clock.now());
      const id = newId("evt", clock.now());
      const body = JSON.stringify({
        id,
        type,
        created_at: now,
        data: {notification: {id: "notif_01TEST", status: "queued", message: "Boiler 2 pressure high"}}
      });
      events.append(
        {id, type, notification_id: "notif_01TEST", created_at: now, body, sequence: null},
        subscriptions.subscribersOf(type)
      );
      return id;
    });
  const subscribe = async (to: WebhookReceiver = receiver, eventTypes = ["*"]) =>
    await webhooks.service.create({url: to.url, events: eventTypes}, admin);
  const outboxRows = () =>
    journal.db
      .prepare(
        "SELECT seq, destination, event_id, status, attempts, next_attempt_at, last_error FROM outbox ORDER BY seq"
      )
      .all() as Array<{
      destination: string;
      event_id: string;
      status: string;
      attempts: number;
      next_attempt_at: string;
      last_error: string | null;
    }>;
  const deliveriesOf = (id: string) => webhooks.service.listDeliveries(id, 200, null).items;
  const otherReceiver = async () => {
    const other = await startWebhookReceiver(clock);
    cleanups.push(() => other.close());
    return other;
  };
  return {
    clock,
    journal,
    config,
    audit,
    receiver,
    ...webhooks,
    emit,
    subscribe,
    outboxRows,
    deliveriesOf,
    otherReceiver,
    subscriptions,
    logLines
  };
}
