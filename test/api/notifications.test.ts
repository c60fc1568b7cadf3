import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  journalCounts,
  startTestGateway,
  type TestGateway
} from "../support/gateway.js";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  alice = await createRecipient(gw);
});
afterAll(() => gw.stop());

const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  gw.call("POST", "/api/v1/notifications/send", {body, headers});

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
    expect(n.escalation).toEqual({step: 0, steps_total: 4, next_step_at: n.created_at, waiting_for: null});
    expect(new Date(n.created_at).toISOString()).toBe(n.created_at);
    expect(answer.headers.get("location")).toBe(n.links.self);
  });

  it("plans nothing but still records an alert for a recipient whose routing allows no channel", async () => {
    const quiet = await createRecipient(gw, {
      phone: null,
      routing_rules: [{priorities: ["info"], channels: ["telegram_voice"]}]
    });
    const answer = await send({recipient_uuid: quiet, message: "FYI", priority: "info"});
    expect(answer.status).toBe(202);
    expect(answer.body.channels_planned).toEqual([]);
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

describe("rejected sends", () => {
  const cases: Array<
    [string, {body?: unknown; raw?: string; headers?: Record<string, string>}, number, string, string | null]
  > = [
    [
      "an unknown field",
      {
        body: {
          recipient_id: "x",
          recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b",
          message: "m",
          priority: "high"
        }
      },
      400,
      "invalid_request",
      "/recipient_id"
    ],
    [
      "a missing priority",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m"}},
      400,
      "invalid_request",
      "/priority"
    ],
    [
      "an unknown priority",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "urgent"}},
      400,
      "invalid_request",
      "/priority"
    ],
    [
      "a blank message",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "   ", priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a message over 4000 characters",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "x".repeat(4001), priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a number where a string belongs",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: 42, priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a link that is not http(s)",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high", link: "ftp://x"}},
      400,
      "invalid_request",
      "/link"
    ],
    [
      "a recipient_uuid that is not a UUID",
      {body: {recipient_uuid: "bob", message: "m", priority: "high"}},
      400,
      "invalid_request",
      "/recipient_uuid"
    ],
    ["a JSON array body", {body: [1, 2]}, 400, "invalid_request", ""],
    [
      "malformed JSON",
      {raw: '{"message": ', headers: {"Content-Type": "application/json"}},
      400,
      "malformed_json",
      null
    ],
    ["no body", {}, 400, "invalid_request", ""],
    [
      "a text/plain body",
      {raw: "disk full", headers: {"Content-Type": "text/plain"}},
      415,
      "unsupported_media_type",
      null
    ],
    [
      "a body over 64 KiB",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "x".repeat(70_000), priority: "high"}},
      413,
      "payload_too_large",
      null
    ],
    [
      "an unknown recipient",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high"}},
      422,
      "unknown_reference",
      "/recipient_uuid"
    ],
    [
      "a malformed Idempotency-Key",
      {
        body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high"},
        headers: {"Idempotency-Key": "x".repeat(256)}
      },
      400,
      "invalid_request",
      null
    ]
  ];

  it.each(cases)(
    "refuses %s with a problem document and stores nothing",
    async (_name, request, status, code, pointer) => {
      const before = await journalCounts(gw);
      const answer = await gw.call("POST", "/api/v1/notifications/send", request);
      expect(answer.status).toBe(status);
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({
        type: `/problems/${code}`,
        status,
        code,
        instance: "/api/v1/notifications/send"
      });
      expect(answer.body.title).toEqual(expect.any(String));
      expect(answer.body.detail).toEqual(expect.any(String));
      expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+/);
      if (pointer !== null) expect(answer.body.errors.map((e: {pointer: string}) => e.pointer)).toContain(pointer);
      expect(await journalCounts(gw)).toEqual(before);
    }
  );

  it("names every problem of a body at once", async () => {
    const answer = await send({recipient_id: "x", message: "", priority: "urgent"});
    expect([...new Set(answer.body.errors.map((e: {pointer: string}) => e.pointer))].sort()).toEqual(
      ["/message", "/priority", "/recipient_id", "/recipient_uuid"].sort()
    );
    expect(answer.body.errors.find((e: {pointer: string}) => e.pointer === "/priority").detail).toBe(
      "must be one of: critical, high, medium, low, info"
    );
  });
});

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
        step: 0,
        started_at: expect.any(String),
        finished_at: expect.any(String),
        outcome: "sent",
        error: "logged only (development driver, nothing was delivered)"
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
