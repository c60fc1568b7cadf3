import {afterEach, describe, expect, it} from "vitest";
import {AppError} from "../../src/services/shared/errors.js";
import {admin, startWebhookRig, stopWebhookRigs} from "../support/webhook-dispatcher-rig.js";
import {verifyDelivery} from "../support/webhook-receiver.js";

afterEach(stopWebhookRigs);

describe("webhook dispatcher", () => {
  it("disables a subscription answered with 410 Gone, gives up its queue and audits it as the system", async () => {
    const {dispatcher, receiver, emit, subscribe, outboxRows, audit, service} = await startWebhookRig();
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
    const {dispatcher, receiver, emit, subscribe, subscriptions, outboxRows, deliveriesOf, logLines} =
      await startWebhookRig(300, (name) => Promise.resolve(resolved.get(name) ?? ["127.0.0.1"]));
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

  it("redelivers an event under the same webhook-id, only to an enabled subscription", async () => {
    const {dispatcher, receiver, emit, subscribe, service, deliveriesOf} = await startWebhookRig();
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
    const {dispatcher, receiver, emit, subscribe, service, outboxRows} = await startWebhookRig();
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
});
