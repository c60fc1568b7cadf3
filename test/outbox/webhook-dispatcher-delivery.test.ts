import {afterEach, describe, expect, it, vi} from "vitest";
import {OutboxRepository} from "../../src/store/journal/outbox.repository.js";
import {WebhookDeliveriesRepository} from "../../src/store/journal/webhook-deliveries.repository.js";
import {isoTimestamp} from "../../src/lib/clock.js";
import {startWebhookRig, stopWebhookRigs} from "../support/webhook-dispatcher-rig.js";
import {verifyDelivery} from "../support/webhook-receiver.js";

afterEach(stopWebhookRigs);

describe("webhook dispatcher", () => {
  it("delivers a committed event, signed so that the stock Standard Webhooks verifier accepts it", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await startWebhookRig();
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
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await startWebhookRig();
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
    const {clock, dispatcher, receiver, emit, subscribe, otherReceiver} = await startWebhookRig();
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
    const {dispatcher, receiver, emit, subscribe, otherReceiver, outboxRows} = await startWebhookRig(1_000);
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

  it("gives up 72 hours after the event was queued, having tried on the schedule", async () => {
    const {clock, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await startWebhookRig();
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
    const {dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await startWebhookRig(10_000);
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
    const {clock, journal, dispatcher, receiver, emit, subscribe, outboxRows, deliveriesOf} = await startWebhookRig();
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

  it("wakes on nudge() and at the earliest due retry, without polling", async () => {
    const {clock, dispatcher, receiver, emit, subscribe} = await startWebhookRig();
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
