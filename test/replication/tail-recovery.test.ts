import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  journalCounts,
  startTestGateway,
  tempDir,
  type TestGateway
} from "../support/gateway.js";
import {endOrphanedLitestreams, requireLitestream} from "../support/litestream.js";
import {eventually} from "../support/eventually.js";
import {boxToken} from "../../src/lib/tokens.js";
import {newId} from "../../src/lib/ids.js";
import {readDocument} from "../../src/store/journal/replication.repository.js";
import type {HandedNotification} from "../../src/domain/tail.js";

// One new active (klaxon-b) for the file; the former active's hand-overs are written by hand.
let gw: TestGateway;
let alice: string;
let token: string;

beforeAll(async () => {
  gw = await startTestGateway({
    ...ALL_CHANNELS_CONFIGURED,
    replication: {
      role: "active",
      box_name: "klaxon-b",
      peer: "http://127.0.0.2:9",
      replica: tempDir(),
      incoming: tempDir(),
      litestream: requireLitestream()
    }
  });
  alice = await createRecipient(gw);
  // The self-monitoring recipient, as the box's settings name it.
  gw.gateway.settings.self_monitoring.recipient = alice;
  token = boxToken(readDocument(gw.gateway.journal.db, "ack_link_key")!);
});
afterAll(async () => {
  await gw.stop();
  endOrphanedLitestreams();
});

/** An alert as the former active's journal held it, accepted `secondsAgo` before now. */
function handed(fields: Partial<HandedNotification> = {}, secondsAgo = 5): HandedNotification {
  const at = Date.now() - secondsAgo * 1000;
  return {
    id: newId("notif", at),
    recipient_uuid: alice,
    message: "Compressor 2 oil pressure low",
    priority: "high",
    source: "plc-7",
    dedup_key: null,
    link: null,
    service: null,
    environment: null,
    created_at: new Date(at).toISOString(),
    status: "notifying",
    acknowledged_at: null,
    acknowledged_by: null,
    acknowledged_via: null,
    ack_note: null,
    resolved_at: null,
    api_key_id: null,
    idempotency: null,
    ...fields
  };
}

const handOver = (
  notifications: HandedNotification[],
  name = "former-journal-1",
  headers: Record<string, string> = {"X-Klaxon-Box-Token": token},
  lastBatch = true
) =>
  gw.call("POST", "/api/v1/replication/tail", {
    key: null,
    headers,
    body: {from_box: "klaxon-a", hand_over: `klaxon-a/${name}`, notifications, last_batch: lastBatch}
  });

const eventsOf = (id: string) =>
  gw.gateway.journal.db.prepare("SELECT type FROM events WHERE notification_id = ? ORDER BY id").pluck().all(id);

describe("the tail comes home: the new active takes what a former active accepted and never shipped", () => {
  it("accepts a missing alert under its own id, time and key's answer, marked recovered, pages it as new, and a replay changes nothing", async () => {
    const sentWithKey = handed();
    const answer = {status: "notifying", notification_uuid: sentWithKey.id};
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const alert = {
      ...sentWithKey,
      idempotency: {
        api_key_id: "key_former",
        key: "plc-7-0042",
        fingerprint: "f",
        status: 202,
        body: JSON.stringify(answer),
        created_at: sentWithKey.created_at,
        expires_at: expires
      }
    };
    const first = await handOver([alert], "former-journal-a");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({recovered: 1, applied: 0, present: 0, refused: []});

    const view = (await gw.call("GET", `/api/v1/notifications/${alert.id}`)).body;
    expect(view).toMatchObject({id: alert.id, created_at: alert.created_at, message: alert.message});
    expect(view.recovered).toEqual([
      {
        change: "accepted",
        from_box: "klaxon-a",
        hand_over: "klaxon-a/former-journal-a",
        recovered_at: expect.any(String)
      }
    ]);
    await eventually(
      "the recovered alert paged",
      async () => (await gw.call("GET", `/api/v1/notifications/${alert.id}`)).body.attempts,
      (attempts) => attempts.length > 0
    );
    expect(eventsOf(alert.id)).toEqual(expect.arrayContaining(["escalation.started", "notification.recovered"]));
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${alert.id}&action=notification.recovered`);
    expect(audit.body.items).toHaveLength(1);
    // The admin hears once how many came home.
    const notices = () =>
      gw.gateway.journal.db
        .prepare("SELECT message FROM notifications WHERE dedup_key = ?")
        .pluck()
        .all("klaxon:recovered:klaxon-a/former-journal-a");
    expect(notices()).toEqual([expect.stringContaining("1 change(s) that klaxon-a accepted")]);

    // The hand-over again (the former active did not hear the answer): nothing changes.
    const before = await journalCounts(gw);
    const replay = await handOver([alert], "former-journal-a");
    expect(replay.body).toEqual({recovered: 0, applied: 0, present: 1, refused: []});
    expect(await journalCounts(gw)).toEqual(before);
    expect(notices()).toHaveLength(1);
  });

  it("applies a recovered acknowledgement or resolve to an alert still open here, and leaves a closed one alone", async () => {
    const send = async (message: string) =>
      (await gw.call("POST", "/api/v1/notifications/send", {body: {recipient_uuid: alice, message, priority: "high"}}))
        .body.notification_uuid as string;
    const open = await send("Boiler flame out");
    const closedHere = await send("Feed pump tripped");
    expect((await gw.call("POST", `/api/v1/notifications/${closedHere}/resolve`)).status).toBe(200);
    const ackedThere = handed({
      id: open,
      status: "acknowledged",
      acknowledged_at: new Date().toISOString(),
      acknowledged_by: "maria",
      acknowledged_via: "sms"
    });
    const resolvedThere = handed({id: closedHere, status: "resolved", resolved_at: new Date().toISOString()});
    // A resolve of an alert this box never had: accepted, then resolved, and never paged.
    const neverHere = handed({status: "resolved", resolved_at: new Date().toISOString()});

    const answer = await handOver([ackedThere, resolvedThere, neverHere], "former-journal-b");
    expect(answer.body).toEqual({recovered: 1, applied: 2, present: 1, refused: []});
    expect((await gw.call("GET", `/api/v1/notifications/${open}`)).body).toMatchObject({
      status: "acknowledged",
      acknowledged_by: "maria",
      acknowledged_via: "sms",
      recovered: [expect.objectContaining({change: "acknowledged"})]
    });
    expect((await gw.call("GET", `/api/v1/notifications/${closedHere}`)).body.recovered).toBeUndefined();
    const never = (await gw.call("GET", `/api/v1/notifications/${neverHere.id}`)).body;
    expect(never.status).toBe("resolved");
    expect(never.recovered.map((change: {change: string}) => change.change).sort()).toEqual(["accepted", "resolved"]);
    await gw.gateway.services.runner.idle();
    expect((await gw.call("GET", `/api/v1/notifications/${neverHere.id}`)).body.attempts).toEqual([]);
  });

  it("a hand-over cut short by the new active's restart and sent again from the start leaves each alert once and tells the admin once of all", async () => {
    const tail = ["Chiller 1 trip", "Chiller 2 trip", "Chiller 3 trip"].map((message) => handed({message}));
    const box = {"X-Klaxon-Box-Token": token};
    expect((await handOver(tail.slice(0, 2), "former-journal-d", box, false)).body).toMatchObject({recovered: 2});
    // The new active goes down after the first request; the former active, unanswered, starts over.
    await gw.restart();
    expect((await handOver(tail.slice(0, 2), "former-journal-d", box, false)).body).toMatchObject({
      recovered: 0,
      present: 2
    });
    expect((await handOver(tail.slice(2), "former-journal-d", box, true)).body).toMatchObject({recovered: 1});
    const db = gw.gateway.journal.db;
    for (const alert of tail) {
      expect(db.prepare("SELECT COUNT(*) FROM notifications WHERE id = ?").pluck().get(alert.id)).toBe(1);
      expect(eventsOf(alert.id).filter((type) => type === "notification.recovered")).toHaveLength(1);
    }
    const notices = db
      .prepare("SELECT message FROM notifications WHERE dedup_key = ?")
      .pluck()
      .all("klaxon:recovered:klaxon-a/former-journal-d");
    expect(notices).toEqual([expect.stringContaining("3 change(s) that klaxon-a accepted")]);
  });

  it("refuses a hand-over without the pair's box token, and bad input with a problem, changing nothing", async () => {
    const before = await journalCounts(gw);
    const alert = handed();
    for (const headers of [{}, {"X-Klaxon-Box-Token": "not-the-token"}] as Record<string, string>[]) {
      const refused = await handOver([alert], "former-journal-c", headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
    const bad = await gw.call("POST", "/api/v1/replication/tail", {
      key: null,
      headers: {"X-Klaxon-Box-Token": token},
      body: {
        from_box: "klaxon-a",
        hand_over: "x",
        notifications: [{...alert, priority: "urgent"}],
        last_batch: true,
        extra: 1
      }
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    expect(bad.body.code).toBe("invalid_request");
    expect(await journalCounts(gw)).toEqual(before);
    expect((await gw.call("GET", `/api/v1/notifications/${alert.id}`)).status).toBe(404);
  });
});
