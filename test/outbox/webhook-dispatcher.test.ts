import {afterEach, describe, expect, it, vi} from "vitest";
import {rmSync} from "node:fs";
import {join} from "node:path";
import {Journal} from "../../src/store/journal/journal.js";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {WebhooksRepository} from "../../src/store/config/repositories.js";
import {AuditRepository} from "../../src/store/journal/audit.repository.js";
import type {Actor} from "../../src/domain/actor.js";
import {EventsRepository} from "../../src/store/journal/events.repository.js";
import {OutboxRepository} from "../../src/store/journal/outbox.repository.js";
import {WebhookDeliveriesRepository} from "../../src/store/journal/webhook-deliveries.repository.js";
import {AuditService} from "../../src/services/shared/audit.service.js";
import {AppError} from "../../src/services/shared/errors.js";
import {createWebhooks} from "../../src/outbox/index.js";
import {isoTimestamp, ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {newId} from "../../src/lib/ids.js";
import type {EventType} from "../../src/domain/vocabulary.js";
import {tempDir} from "../support/gateway.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "../support/webhook-receiver.js";

const logger = createLogger("error", () => undefined);
const admin: Actor = {type: "api_key", id: "testkey1"};
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A journal and config store in a temp dir, the webhooks feature on a manual clock set to real time, and a receiver. */
async function setup(requestTimeoutMs = 300, resolveHost?: (hostname: string) => Promise<string[]>) {
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

describe("webhook dispatcher", () => {
  it("delivers a committed event, signed so that the stock Standard Webhooks verifier accepts it", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await setup();
    const {subscription, secret} = await subscribe(receiver, ["escalation.started"]);
    const eventId = await emit("escalation.started");
    await emit("notification.resolved");
    await dispatcher.tick();

    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    expect(verifyDelivery(delivery, secret)).toMatchObject({
      id: eventId,
      type: "escalation.started",
      data: {notification: {id: "notif_01TEST"}}
    });
    expect(delivery.headers).toMatchObject({
      "webhook-id": eventId,
      "webhook-timestamp": String(Math.floor(clock.now() / 1000)),
      "x-service-signature": delivery.headers["webhook-signature"],
      "content-type": "application/json",
      "user-agent": "Klaxon-Webhooks/1"
    });
    expect(outboxRows()).toMatchObject([{event_id: eventId, status: "delivered", attempts: 1}]);
    expect(deliveriesOf(subscription.id)).toMatchObject([
      {event_id: eventId, event_type: "escalation.started", attempt: 1, status_code: 200, error: null, duration_ms: 0}
    ]);
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(1);
  });

  it("retries through a 500, a timeout and a 429 with Retry-After, then delivers; every attempt verifies under one webhook-id", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await setup();
    const {subscription, secret} = await subscribe();
    receiver.script({status: 500}, "hang", {status: 429, headers: {"Retry-After": "600"}});
    const eventId = await emit();
    const t0 = clock.now();

    await dispatcher.tick();
    expect(outboxRows()[0]).toMatchObject({
      status: "pending",
      attempts: 1,
      last_error: "HTTP 500",
      next_attempt_at: isoTimestamp(t0 + 10_000)
    });
    clock.advance(9_999);
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(1);

    clock.advance(1);
    await dispatcher.tick();
    expect(outboxRows()[0]).toMatchObject({
      status: "pending",
      attempts: 2,
      last_error: "no answer within 300 ms",
      next_attempt_at: isoTimestamp(t0 + 70_000)
    });

    clock.set(t0 + 70_000);
    await dispatcher.tick();
    // Our backoff says 5 minutes; the receiver asked for 10.
    expect(outboxRows()[0]).toMatchObject({
      status: "pending",
      attempts: 3,
      last_error: "HTTP 429",
      next_attempt_at: isoTimestamp(t0 + 670_000)
    });
    clock.set(t0 + 669_999);
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(3);

    clock.set(t0 + 670_000);
    await dispatcher.tick();
    expect(outboxRows()[0]).toMatchObject({status: "delivered", attempts: 4});
    expect(receiver.received).toHaveLength(4);
    for (const delivery of receiver.received) {
      expect(verifyDelivery(delivery, secret).id).toBe(eventId);
      expect(delivery.headers["webhook-id"]).toBe(eventId);
    }
    expect(
      receiver.received.map((delivery) => Number(delivery.headers["webhook-timestamp"]) - Math.floor(t0 / 1000))
    ).toEqual([0, 10, 70, 670]);
    expect(
      deliveriesOf(subscription.id).map(({attempt, status_code, error}) => ({attempt, status_code, error}))
    ).toEqual([
      {attempt: 4, status_code: 200, error: null},
      {attempt: 3, status_code: 429, error: "HTTP 429"},
      {attempt: 2, status_code: null, error: "no answer within 300 ms"},
      {attempt: 1, status_code: 500, error: "HTTP 500"}
    ]);
  });

  it("keeps each subscription's events in order, and one failing subscriber does not hold up another", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, otherReceiver} = await setup();
    const other = await otherReceiver();
    const first = await subscribe(receiver);
    const second = await subscribe(other);
    receiver.script({status: 503});
    const e1 = await emit();
    const e2 = await emit("notification.acknowledged");

    await dispatcher.tick();
    await dispatcher.tick();
    expect(receiver.received.map((delivery) => delivery.headers["webhook-id"])).toEqual([e1]);
    expect(other.received.map((delivery) => delivery.headers["webhook-id"])).toEqual([e1, e2]);

    clock.advance(10_000);
    await dispatcher.tick();
    await dispatcher.tick();
    expect(receiver.received.map((delivery) => delivery.headers["webhook-id"])).toEqual([e1, e1, e2]);
    for (const delivery of receiver.received) verifyDelivery(delivery, first.secret);
    for (const delivery of other.received) verifyDelivery(delivery, second.secret);
  });

  it("lets neither journal commits nor other subscribers wait on a receiver that hangs", async () => {
    const {dispatcher, receiver, emit, subscribe, otherReceiver, outboxRows} = await setup(1_000);
    const other = await otherReceiver();
    await subscribe(receiver);
    const fast = await subscribe(other);
    receiver.script("hang");
    await emit();
    let passDone = false;
    const pass = dispatcher.tick().then(() => (passDone = true));
    await receiver.next();

    // The hanging request is open, yet events commit and the other subscriber gets its next one at once.
    const e2 = await emit("escalation.step");
    await vi.waitFor(() =>
      expect(
        outboxRows()
          .filter((row) => row.destination === fast.subscription.id)
          .map((row) => row.status)
      ).toEqual(["delivered", "pending"])
    );
    await dispatcher.tick();
    expect(other.received.map((delivery) => delivery.headers["webhook-id"])[1]).toBe(e2);
    expect(receiver.received).toHaveLength(1);
    expect(passDone).toBe(false);
    await pass;
    expect(
      outboxRows()
        .filter((row) => row.destination !== fast.subscription.id)
        .map((row) => row.last_error)
    ).toEqual(["no answer within 1000 ms", null]);
  });

  it("disables a subscription answered with 410 Gone, gives up its queue and audits it as the system", async () => {
    const {dispatcher, receiver, emit, subscribe, outboxRows, audit, service} = await setup();
    const {subscription, secret} = await subscribe();
    receiver.script({status: 410});
    await emit();
    await emit();
    await dispatcher.tick();

    verifyDelivery(receiver.received[0], secret);
    expect(service.get(subscription.id).enabled).toBe(false);
    expect(outboxRows().map((row) => [row.status, row.last_error])).toEqual([
      ["failed", "HTTP 410"],
      ["failed", "subscription disabled: the receiver answered 410 Gone"]
    ]);
    expect(audit.list({limit: 10, action: "webhook.disabled"})).toMatchObject([
      {
        actor: {type: "system", id: null},
        subject: {type: "webhook", id: subscription.id},
        detail: {reason: "410 Gone", failed_deliveries: 1}
      }
    ]);
    await emit();
    expect(outboxRows()).toHaveLength(2);
  });

  it("refuses, for good, a name that resolves to a link-local address and a URL stored with a password, writing the password nowhere", async () => {
    const resolved = new Map([
      ["metadata.factory.lan", ["10.0.0.9", "169.254.169.254"]],
      ["this-host.factory.lan", ["0.0.0.0"]]
    ]);
    const {dispatcher, receiver, emit, subscribe, subscriptions, outboxRows, deliveriesOf, logLines} = await setup(
      300,
      (name) => Promise.resolve(resolved.get(name) ?? ["127.0.0.1"])
    );
    const reachable = await subscribe();
    const now = new Date().toISOString();
    // As a config store written before the API refused these could hold them.
    const stored = (id: string, url: string) =>
      subscriptions.insert({
        id,
        url,
        events: ["*"],
        enabled: true,
        secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmU=",
        created_at: now,
        updated_at: now
      });
    await stored("whk_metadata", "http://metadata.factory.lan/hook");
    await stored("whk_thishost", "http://this-host.factory.lan:8080/hook");
    await stored("whk_password", `http://ops:hunter2-9f8e7d6c@127.0.0.1:${new URL(receiver.url).port}/hook`);
    await emit();
    await dispatcher.tick();

    expect(receiver.received).toHaveLength(1);
    expect(deliveriesOf(reachable.subscription.id)).toMatchObject([{status_code: 200}]);
    expect(deliveriesOf("whk_metadata")).toMatchObject([
      {
        status_code: null,
        error: expect.stringMatching(
          /^destination refused: metadata\.factory\.lan resolves to 169\.254\.169\.254, a link-local/
        )
      }
    ]);
    expect(deliveriesOf("whk_thishost")).toMatchObject([{error: expect.stringMatching(/resolves to 0\.0\.0\.0/)}]);
    expect(deliveriesOf("whk_password")).toMatchObject([{error: expect.stringMatching(/user name or password/)}]);
    expect(
      outboxRows()
        .filter((row) => row.destination !== reachable.subscription.id)
        .map((row) => row.status)
    ).toEqual(["failed", "failed", "failed"]);
    expect(
      JSON.stringify(outboxRows()) + JSON.stringify(deliveriesOf("whk_password")) + logLines.join("\n")
    ).not.toContain("hunter2");
  });

  it("gives up 72 hours after the event was queued, having tried on the schedule", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await setup();
    const {subscription, secret} = await subscribe();
    receiver.script(...Array.from({length: 100}, () => ({status: 500})));
    await emit();
    const t0 = clock.now();
    while (outboxRows()[0].status === "pending") {
      clock.set(Date.parse(outboxRows()[0].next_attempt_at));
      await dispatcher.tick();
    }
    const offsets = receiver.received.map((delivery) => delivery.receivedAtMs - t0);
    expect(offsets.slice(0, 6)).toEqual([0, 10_000, 70_000, 370_000, 2_170_000, 5_770_000]);
    expect(offsets).toHaveLength(76);
    expect(offsets[75]).toBeLessThanOrEqual(72 * 3_600_000);
    expect(outboxRows()[0]).toMatchObject({status: "failed", attempts: 76, last_error: "HTTP 500"});
    expect(deliveriesOf(subscription.id)).toHaveLength(76);
    for (const delivery of receiver.received) verifyDelivery(delivery, secret);
  });

  it("hands a request in flight back on stop, and sends it again at once", async () => {
    const {dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await setup(10_000);
    const {subscription, secret} = await subscribe();
    receiver.script("hang");
    await emit();
    const pass = dispatcher.tick();
    await receiver.next();
    await dispatcher.stop();
    await pass;
    expect(outboxRows()[0]).toMatchObject({status: "pending", last_error: "interrupted: the gateway is stopping"});
    await dispatcher.tick();
    expect(outboxRows()[0]).toMatchObject({status: "delivered", attempts: 2});
    expect(deliveriesOf(subscription.id).map((delivery) => delivery.status_code)).toEqual([200, null]);
    for (const delivery of receiver.received) verifyDelivery(delivery, secret);
  });

  it("after a crash, sends again what was in flight and closes its open attempt as interrupted", async () => {
    const {clock, journal, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await setup();
    const {subscription, secret} = await subscribe();
    await emit();
    // What a process killed mid-request leaves behind: the row claimed, its attempt open.
    const outbox = new OutboxRepository(journal);
    const deliveries = new WebhookDeliveriesRepository(journal);
    await journal.write(() => {
      const now = isoTimestamp(clock.now());
      for (const row of outbox.claimDue(now, [subscription.id]))
        deliveries.start({
          outbox_seq: row.seq,
          subscription_id: row.destination,
          event_id: row.event_id,
          attempt: row.attempt,
          started_at: now
        });
    });
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(0);

    expect(await dispatcher.recover()).toBe(1);
    await dispatcher.tick();
    expect(outboxRows()[0]).toMatchObject({status: "delivered", attempts: 2});
    expect(
      deliveriesOf(subscription.id).map(({attempt, status_code, error}) => ({attempt, status_code, error}))
    ).toEqual([
      {attempt: 2, status_code: 200, error: null},
      {attempt: 1, status_code: null, error: "interrupted: the gateway stopped during this attempt"}
    ]);
    verifyDelivery(receiver.received[0], secret);
  });

  it("redelivers an event under the same webhook-id, only to an enabled subscription", async () => {
    const {dispatcher, receiver, emit, subscribe, service, deliveriesOf} = await setup();
    const {subscription, secret} = await subscribe();
    const eventId = await emit();
    await dispatcher.tick();
    const [first] = deliveriesOf(subscription.id);

    expect(await service.redeliver(subscription.id, first.id, admin)).toMatchObject({
      subscription_id: subscription.id,
      event_id: eventId
    });
    await dispatcher.tick();
    expect(receiver.received.map((delivery) => verifyDelivery(delivery, secret).id)).toEqual([eventId, eventId]);
    expect(deliveriesOf(subscription.id).map((delivery) => [delivery.event_id, delivery.attempt])).toEqual([
      [eventId, 1],
      [eventId, 1]
    ]);

    await expect(service.redeliver(subscription.id, 999, admin)).rejects.toMatchObject({code: "not_found"});
    await service.replace(subscription.id, {url: receiver.url, events: ["*"], enabled: false}, admin);
    await expect(service.redeliver(subscription.id, first.id, admin)).rejects.toBeInstanceOf(AppError);
  });

  it("holds a disabled subscription's queue until it is enabled again, and gives it up when it is deleted", async () => {
    const {dispatcher, receiver, emit, subscribe, service, outboxRows} = await setup();
    const {subscription} = await subscribe();
    const paused = await subscribe(receiver);
    await service.replace(paused.subscription.id, {url: receiver.url, events: ["*"], enabled: false}, admin);
    await emit();
    await service.replace(subscription.id, {url: receiver.url, events: ["*"], enabled: false}, admin);
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(0);

    await service.replace(subscription.id, {url: receiver.url, events: ["*"], enabled: true}, admin);
    await emit();
    await service.remove(paused.subscription.id, admin);
    await dispatcher.tick();
    await dispatcher.tick();
    expect(receiver.received).toHaveLength(2);
    expect(outboxRows().map((row) => row.status)).toEqual(["delivered", "delivered"]);

    await service.replace(subscription.id, {url: receiver.url, events: ["*"], enabled: false}, admin);
    await emit();
    expect(outboxRows()).toHaveLength(2);
  });

  it("wakes on nudge() and at the earliest due retry, without polling", async () => {
    const {clock, dispatcher, receiver, emit, subscribe} = await setup();
    const {secret} = await subscribe();
    await dispatcher.start();
    expect(dispatcher.wakeAt).toBeNull();

    await emit();
    dispatcher.nudge();
    verifyDelivery(await receiver.next(), secret);

    receiver.script({status: 500});
    await emit();
    dispatcher.nudge();
    await receiver.next();
    await vi.waitFor(() => expect(dispatcher.wakeAt).toBe(clock.now() + 10_000));
    await dispatcher.stop();
    expect(dispatcher.wakeAt).toBeNull();
  });
});
