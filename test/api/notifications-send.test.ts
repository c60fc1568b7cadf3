import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, journalCounts, type TestGateway} from "../support/gateway.js";
import {notificationRig} from "../support/notification-rig.js";

// What an accepted send answers and stores, and a send the journal cannot commit; refused sends are in
// notifications-rejected-sends.test.ts, what happens to a notification afterwards in
// notifications-read-ack-resolve.test.ts.
const {start, send} = notificationRig();
let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  ({gw, alice} = await start());
});
afterAll(() => gw.stop());

describe("POST /api/v1/notifications/send", () => {
  it("answers 202 with the short form and a Location by default", async () => {
    const answer = await send({recipient_uuid: alice, message: "Disk full on db1", priority: "critical"});
    expect(answer.status).toBe(202);
    expect(Object.keys(answer.body).sort()).toEqual([
      "channels_planned",
      "escalation_chain_id",
      "notification_uuid",
      "status"
    ]);
    expect(answer.body.status).toBe("queued");
    expect(answer.body.notification_uuid).toMatch(/^notif_[0-9A-Z]{26}$/);
    expect(answer.body.escalation_chain_id).toMatch(/^esc_[0-9A-Z]{26}$/);
    expect(answer.body.channels_planned).toEqual(["voice_call", "email"]);
    expect(answer.headers.get("location")).toBe(`/api/v1/notifications/${answer.body.notification_uuid}`);
  });

  it("answers 200 with the long form when the client prefers a representation", async () => {
    // A recipient nobody pages yet: an alert to Alice would join the chain paging her (the storm rule).
    const bob = await createRecipient(gw);
    const answer = await send(
      {
        recipient_uuid: bob,
        message: "  CPU hot  ",
        priority: "high",
        source: "plc-7",
        link: "https://grafana.lan/d/1",
        service: "press",
        environment: "hall-2"
      },
      {Prefer: "return=representation"}
    );
    expect(answer.status).toBe(200);
    const n = answer.body;
    expect(n).toMatchObject({
      status: "queued",
      recipient_uuid: bob,
      message: "CPU hot",
      priority: "high",
      source: "plc-7",
      link: "https://grafana.lan/d/1",
      service: "press",
      environment: "hall-2",
      occurrences: 1,
      attempts: []
    });
    expect(n.links).toEqual({self: `/api/v1/notifications/${n.id}`, ack: `/api/v1/notifications/${n.id}/ack`});
    expect(n.escalation).toEqual({
      step: 0,
      steps_carried: 0,
      steps_total: 4,
      next_step_at: n.created_at,
      waiting_for: null,
      grouped_with: null
    });
    expect(new Date(n.created_at).toISOString()).toBe(n.created_at);
    expect(answer.headers.get("location")).toBe(n.links.self);
  });

  // An alert with no channel in its plan would page nobody: such a recipient is refused when written (test/api/plans.test.ts).
  it("refuses a recipient whose routing allows no channel for a priority, so no alert is planned with nothing", async () => {
    const refused = await gw.call("POST", "/api/v1/recipients", {
      body: {
        name: "Quiet",
        email: "quiet@example.com",
        routing_rules: [{priorities: ["info"], channels: ["telegram_voice"]}]
      }
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      {pointer: "/routing_rules/0", detail: expect.stringMatching(/^priority info has no channel: /)}
    ]);
  });

  it("commits the notification, escalation, audit entry and event together", async () => {
    const before = await journalCounts(gw);
    const answer = await send({recipient_uuid: alice, message: "one more", priority: "medium"});
    expect(answer.status).toBe(202);
    const after = await journalCounts(gw);
    expect(after.notifications - before.notifications).toBe(1);
    expect(after.escalations - before.escalations).toBe(1);
    expect(after.audit - before.audit).toBe(1);
    const started = gw.gateway.journal.db
      .prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'escalation.started' AND notification_id = ?")
      .get(answer.body.notification_uuid);
    expect(started).toEqual({n: 1});
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${answer.body.notification_uuid}`);
    expect(audit.body.items[0]).toMatchObject({
      action: "notification.accepted",
      actor: {type: "api_key"},
      subject: {type: "notification", id: answer.body.notification_uuid}
    });
  });

  it("merges a send into the open notification with the same dedup_key", async () => {
    const first = await send({recipient_uuid: alice, message: "pump 3 down", priority: "high", dedup_key: "pump-3"});
    const second = await send(
      {recipient_uuid: alice, message: "pump 3 down", priority: "high", dedup_key: "pump-3"},
      {Prefer: "return=representation"}
    );
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.notification_uuid);
    expect(second.body.occurrences).toBe(2);
    await gw.call("POST", `/api/v1/notifications/${second.body.id}/resolve`);
    const third = await send({
      recipient_uuid: alice,
      message: "pump 3 down again",
      priority: "high",
      dedup_key: "pump-3"
    });
    expect(third.body.notification_uuid).not.toBe(first.body.notification_uuid);
  });

  it("targets a group and plans its members' channels", async () => {
    const bob = await createRecipient(gw, {name: "Bob", phone: null, email: null, telegram_id: "123456789"});
    const group = await gw.call("POST", "/api/v1/groups", {
      body: {name: "Night shift", members: [bob, alice], strategy: "parallel"}
    });
    expect(group.status).toBe(201);
    const answer = await send(
      {recipient_uuid: group.body.uuid, message: "Line 2 stopped", priority: "critical"},
      {Prefer: "return=representation"}
    );
    expect(answer.status).toBe(200);
    expect(answer.body.channels_planned).toEqual(["telegram_voice", "voice_call", "email"]);
    expect(answer.body.escalation.steps_total).toBe(4);
  });
});

describe("storage failures", () => {
  it("answers 503 with Retry-After when the journal cannot commit, and stores nothing", async () => {
    const db = gw.gateway.journal.db;
    const pages = db.pragma("page_count", {simple: true}) as number;
    db.pragma(`max_page_count = ${pages}`);
    try {
      let answer: Awaited<ReturnType<typeof send>> | undefined;
      let before = await journalCounts(gw);
      // Fill the last free pages first; the full disk shows as soon as a commit needs a new page.
      for (let i = 0; i < 200; i++) {
        before = await journalCounts(gw);
        answer = await send({recipient_uuid: alice, message: "x".repeat(3000), priority: "high"});
        if (answer.status !== 202) break;
      }
      expect(answer!.status).toBe(503);
      expect(answer!.body.code).toBe("storage_unavailable");
      expect(answer!.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await journalCounts(gw)).toEqual(before);
      const ready = await gw.call("GET", "/readyz", {key: null});
      expect(ready.status).toBe(503);
      expect(ready.body.journal.can_commit).toBe(false);
    } finally {
      db.pragma("max_page_count = 1073741823");
    }
    expect((await gw.call("GET", "/readyz", {key: null})).status).toBe(200);
    const recovered = await send({recipient_uuid: alice, message: "after the disk was freed", priority: "high"});
    expect(recovered.status).toBe(202);
  });
});
