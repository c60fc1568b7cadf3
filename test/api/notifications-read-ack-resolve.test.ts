import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, journalCounts, type TestGateway} from "../support/gateway.js";
import {notificationRig} from "../support/notification-rig.js";

// What happens to a notification after it is sent: reading it back, listing, acknowledging, resolving.
const {start, send} = notificationRig();
let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  ({gw, alice} = await start());
});
afterAll(() => gw.stop());

describe("reading, listing, acknowledging and resolving", () => {
  it("reads a notification by id with its attempts, and answers 404 for an unknown one", async () => {
    // A person of its own: alerts to a person already being paged wait for that page's next step.
    const bob = await createRecipient(gw, {name: "Bob"});
    const sent = await send({recipient_uuid: bob, message: "read me", priority: "low"});
    await gw.gateway.services.runner.idle();
    const read = await gw.call("GET", `/api/v1/notifications/${sent.body.notification_uuid}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: sent.body.notification_uuid,
      message: "read me",
      status: "notifying",
      acknowledged_at: null
    });
    expect(read.body.escalation.step).toBe(1);
    expect(read.body.attempts).toEqual([
      {
        channel: "voice_call",
        recipient_uuid: bob,
        target: "+49********678",
        step: 1,
        started_at: expect.any(String),
        finished_at: expect.any(String),
        outcome: "sent",
        detail: "logged only (development driver, nothing was delivered)",
        error: null
      }
    ]);
    const missing = await gw.call("GET", "/api/v1/notifications/notif_00000000000000000000000000");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
  });

  it("lists newest first with filters and cursor pagination", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await send({recipient_uuid: alice, message: `page ${i}`, priority: "info"})).body.notification_uuid);
    const first = await gw.call("GET", "/api/v1/notifications?priority=info&limit=3");
    expect(first.status).toBe(200);
    expect(first.body.items.map((n: {id: string}) => n.id)).toEqual(ids.slice(2).reverse());
    const second = await gw.call("GET", `/api/v1/notifications?priority=info&limit=3&cursor=${first.body.next_cursor}`);
    const rest = second.body.items.map((n: {id: string}) => n.id);
    expect(rest.slice(0, 2)).toEqual(ids.slice(0, 2).reverse());
    expect(second.body.items.every((n: {priority: string}) => n.priority === "info")).toBe(true);
  });

  it("rejects a bad limit, status or cursor", async () => {
    for (const query of ["limit=0", "limit=201", "limit=ten", "status=open", "priority=urgent", "cursor=abc"]) {
      const answer = await gw.call("GET", `/api/v1/notifications?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.errors[0].pointer).toBe(`/${query.split("=")[0]}`);
    }
  });

  it("acknowledges once, keeps the first acknowledgement, stops the escalation and emits an event", async () => {
    const carol = await createRecipient(gw, {name: "Carol"});
    const sent = await send({recipient_uuid: carol, message: "ack me", priority: "critical"});
    const id = sent.body.notification_uuid;
    await gw.gateway.services.runner.idle();
    const events = (await journalCounts(gw)).events;
    const ack = await gw.call("POST", `/api/v1/notifications/${id}/ack`, {body: {by: "maria", note: "on my way"}});
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({
      status: "acknowledged",
      acknowledged_by: "maria",
      acknowledged_via: "api",
      acknowledged_note: "on my way"
    });
    expect(ack.body.escalation.next_step_at).toBeNull();
    expect((await journalCounts(gw)).events).toBe(events + 1);
    const again = await gw.call("POST", `/api/v1/notifications/${id}/ack`, {body: {by: "someone else"}});
    expect(again.status).toBe(200);
    expect(again.body.acknowledged_by).toBe("maria");
    expect(again.body.acknowledged_at).toBe(ack.body.acknowledged_at);
    expect((await journalCounts(gw)).events).toBe(events + 1);
    const escalation = gw.gateway.journal.db
      .prepare("SELECT state, generation, next_step_at FROM escalations WHERE notification_id = ?")
      .get(id);
    // Generation 1 was the first step's; stopping bumps it again so its stored wake-up is stale.
    expect(escalation).toEqual({state: "stopped", generation: 2, next_step_at: null});
  });

  it("acknowledges with an empty body, naming the key", async () => {
    const sent = await send({recipient_uuid: alice, message: "ack me too", priority: "high"});
    const ack = await gw.call("POST", `/api/v1/notifications/${sent.body.notification_uuid}/ack`);
    expect(ack.status).toBe(200);
    expect(ack.body.acknowledged_by).toBe("initial admin");
  });

  it("resolves, and refuses to acknowledge a resolved notification", async () => {
    const sent = await send({recipient_uuid: alice, message: "resolve me", priority: "high"});
    const id = sent.body.notification_uuid;
    const resolved = await gw.call("POST", `/api/v1/notifications/${id}/resolve`);
    expect(resolved.status).toBe(200);
    expect(resolved.body.status).toBe("resolved");
    expect((await gw.call("POST", `/api/v1/notifications/${id}/resolve`)).status).toBe(200);
    const ack = await gw.call("POST", `/api/v1/notifications/${id}/ack`);
    expect(ack.status).toBe(409);
    expect(ack.body.code).toBe("conflict");
    expect((await gw.call("POST", "/api/v1/notifications/notif_00000000000000000000000000/ack")).status).toBe(404);
  });

  it("rejects an acknowledgement body with unknown fields", async () => {
    const sent = await send({recipient_uuid: alice, message: "x", priority: "high"});
    const ack = await gw.call("POST", `/api/v1/notifications/${sent.body.notification_uuid}/ack`, {body: {who: "me"}});
    expect(ack.status).toBe(400);
    expect(ack.body.errors[0].pointer).toBe("/who");
    expect(
      (await gw.call("GET", `/api/v1/notifications/${sent.body.notification_uuid}`)).body.acknowledged_at
    ).toBeNull();
  });
});
