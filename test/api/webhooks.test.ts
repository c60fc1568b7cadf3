import {afterAll, beforeAll, describe, expect, it, vi} from "vitest";
import {systemClock} from "../../src/lib/clock.js";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "../support/webhook-receiver.js";

let gw: TestGateway;
let receiver: WebhookReceiver;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  receiver = await startWebhookReceiver(systemClock);
});
afterAll(async () => {
  await Promise.all([receiver, ...receivers].map((each) => each.close()));
  await gw.stop();
});

const create = (body: Record<string, unknown>) => gw.call("POST", "/api/v1/webhooks", {body});
const pointers = (answer: {body: {errors?: Array<{pointer: string}>}}) =>
  (answer.body.errors ?? []).map((error) => error.pointer);

describe("webhook subscriptions API", () => {
  it("creates a subscription and shows its secret only in that answer", async () => {
    const answer = await create({url: receiver.url, events: ["escalation.started", "contact.failed"]});
    expect(answer.status).toBe(201);
    const {id, secret} = answer.body;
    expect(answer.headers.get("location")).toBe(`/api/v1/webhooks/${id}`);
    expect(id).toMatch(/^whk_[0-9A-Z]{26}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(answer.body).toMatchObject({
      url: receiver.url,
      events: ["escalation.started", "contact.failed"],
      enabled: true,
      previous_secret_expires_at: null
    });

    const read = await gw.call("GET", `/api/v1/webhooks/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");
    const list = await gw.call("GET", "/api/v1/webhooks");
    expect(list.body.items.find((item: {id: string}) => item.id === id)).toEqual(read.body);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
  });

  it.each([
    [{url: "ftp://factory.lan/hook", events: ["*"]}, "/url"],
    [{url: "/relative/hook", events: ["*"]}, "/url"],
    [{events: ["*"]}, "/url"],
    [{url: "http://factory.lan/hook", events: []}, "/events"],
    [{url: "http://factory.lan/hook", events: ["alert.fired"]}, "/events/0"],
    [{url: "http://factory.lan/hook", events: ["*", "contact.failed"]}, "/events"],
    [{url: "http://factory.lan/hook", events: ["*"], enabled: "yes"}, "/enabled"],
    [{url: "http://factory.lan/hook", events: ["*"], secret: "whsec_mine"}, "/secret"]
  ])("refuses %j at %s", async (body, pointer) => {
    const answer = await create(body);
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toContain(pointer);
  });

  it("updates with JSON Merge Patch, refuses read-only fields and answers 404 for unknown ids", async () => {
    const {id} = (await create({url: "http://factory.lan/a", events: ["*"]})).body;
    const patched = await gw.call("PATCH", `/api/v1/webhooks/${id}`, {
      body: {enabled: false, events: ["notification.resolved"]},
      headers: {"Content-Type": "application/merge-patch+json"}
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: "http://factory.lan/a",
      events: ["notification.resolved"],
      enabled: false
    });
    for (const body of [{events: null}, {url: "mailto:ops@factory.lan"}, {secret: "x"}, {id: "whk_x"}]) {
      const refused = await gw.call("PATCH", `/api/v1/webhooks/${id}`, {body});
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    expect((await gw.call("GET", `/api/v1/webhooks/${id}`)).body).toEqual(patched.body);
    const unknown = "whk_00000000000000000000000000";
    expect((await gw.call("GET", `/api/v1/webhooks/${unknown}`)).status).toBe(404);
    expect((await gw.call("PATCH", `/api/v1/webhooks/${unknown}`, {body: {enabled: true}})).status).toBe(404);
    expect((await gw.call("POST", `/api/v1/webhooks/${unknown}/rotate-secret`)).status).toBe(404);
    expect((await gw.call("GET", `/api/v1/webhooks/${unknown}/deliveries`)).status).toBe(404);
  });

  it("rotates the secret, deletes, and audits every change without a secret", async () => {
    const first = (await create({url: "http://factory.lan/b", events: ["*"]})).body;
    const rotated = await gw.call("POST", `/api/v1/webhooks/${first.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(first.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.parse(rotated.body.updated_at)).toBe(
      24 * 3_600_000
    );
    expect((await gw.call("DELETE", `/api/v1/webhooks/${first.id}`)).status).toBe(204);
    expect((await gw.call("GET", `/api/v1/webhooks/${first.id}`)).status).toBe(404);

    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${first.id}`);
    expect(audit.body.items.map((entry: {action: string}) => entry.action)).toEqual([
      "webhook.deleted",
      "webhook.secret_rotated",
      "webhook.created"
    ]);
    expect(audit.body.items.every((entry: {actor: {type: string}}) => entry.actor.type === "api_key")).toBe(true);
    expect(JSON.stringify(audit.body)).not.toContain("whsec_");
  });

  it("is for admin keys only", async () => {
    const reader = await gw.call("POST", "/api/v1/keys", {
      body: {name: "reader", scopes: ["recipients:read", "recipients:write"]}
    });
    const answer = await gw.call("GET", "/api/v1/webhooks", {key: reader.body.key});
    expect(answer.status).toBe(403);
    expect((await gw.call("GET", "/api/v1/webhooks", {key: null})).status).toBe(401);
  });

  it("delivers an accepted alert's event signed, logs the attempt and redelivers it on request", async () => {
    // A receiver of its own: the first test's subscription also wants escalation.started.
    const own = await startWebhookReceiver(systemClock);
    receivers.push(own);
    const {id, secret} = (await create({url: own.url, events: ["escalation.started"]})).body;
    const recipient = await createRecipient(gw, {name: "Webhook watcher"});
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: recipient, message: "Boiler 2 pressure high", priority: "high"}
    });
    expect(sent.status).toBe(202);

    const delivery = await own.next();
    const event = verifyDelivery(delivery, secret);
    expect(event).toMatchObject({type: "escalation.started", data: {notification: {id: sent.body.notification_uuid}}});
    expect(delivery.headers["webhook-id"]).toBe(event.id);

    let logged: {items: Array<{id: number; event_id: string; status_code: number | null}>} = {items: []};
    await vi.waitFor(async () => {
      logged = (await gw.call("GET", `/api/v1/webhooks/${id}/deliveries?limit=10`)).body;
      expect(logged.items[0]).toMatchObject({event_id: event.id, status_code: 200, attempt: 1});
    });
    expect((await gw.call("GET", `/api/v1/webhooks/${id}/deliveries?cursor=abc`)).status).toBe(400);
    expect((await gw.call("POST", `/api/v1/webhooks/${id}/deliveries/999999/redeliver`)).status).toBe(404);

    const redelivered = await gw.call("POST", `/api/v1/webhooks/${id}/deliveries/${logged.items[0].id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toMatchObject({subscription_id: id, event_id: event.id});
    const again = await own.next();
    expect(verifyDelivery(again, secret).id).toBe(event.id);
    expect(again.body).toBe(delivery.body);
  });

  it("takes a family filter such as escalation.* and delivers that family's events only", async () => {
    const own = await startWebhookReceiver(systemClock);
    receivers.push(own);
    expect((await create({url: own.url, events: ["notifications.*"]})).status).toBe(400);
    const answer = await create({url: own.url, events: ["escalation.*", "contact.*"]});
    expect(answer.status).toBe(201);
    expect(answer.body.events).toEqual(["escalation.*", "contact.*"]);
    const recipient = await createRecipient(gw, {name: "Family watcher"});
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: recipient, message: "Press 4 stopped", priority: "high"}
    });
    await gw.call("POST", `/api/v1/notifications/${sent.body.notification_uuid}/resolve`);
    const first = verifyDelivery(await own.next(), answer.body.secret);
    expect(first).toMatchObject({type: "escalation.started", data: {notification: {id: sent.body.notification_uuid}}});
    // notification.resolved was emitted after it but is not of the family: nothing else arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      own.received
        .map((delivery) => (JSON.parse(delivery.body) as {type: string}).type)
        .filter((type) => type.startsWith("notification."))
    ).toEqual([]);
  });
});
