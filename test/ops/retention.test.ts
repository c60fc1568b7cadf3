import {afterEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {InboundSmsRepository} from "../../src/store/journal/inbound-sms.repository.js";

let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

const DAY = 86_400_000;

function rowsFor(gateway: TestGateway, id: string): Record<string, number> {
  const db = gateway.gateway.journal.db;
  const count = (sql: string) => (db.prepare(sql).get(id) as {n: number}).n;
  return {
    notifications: count("SELECT COUNT(*) AS n FROM notifications WHERE id = ?"),
    escalations: count("SELECT COUNT(*) AS n FROM escalations WHERE notification_id = ?"),
    attempts: count("SELECT COUNT(*) AS n FROM attempts WHERE notification_id = ?"),
    events: count("SELECT COUNT(*) AS n FROM events WHERE notification_id = ?"),
    outbox: count(
      "SELECT COUNT(*) AS n FROM outbox WHERE event_id IN (SELECT id FROM events WHERE notification_id = ?)"
    )
  };
}

describe("retention", () => {
  it("deletes old closed notifications with everything attached, never an open one or one with webhooks still to deliver", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    gw = await startTestGateway(
      {...ALL_CHANNELS_CONFIGURED, retention: {notifications_days: 30, audit_days: 60}},
      {clock}
    );
    const recipient = (await gw.call("POST", "/api/v1/recipients", {body: {name: "Ops", email: "ops@factory.lan"}}))
      .body.uuid;
    // Two incoming SMS: one acted on (it goes with the audit entries of its time), one unreadable.
    const inbound = new InboundSmsRepository(gw.gateway.journal);
    const smsAt = new Date(clock.now()).toISOString();
    await gw.gateway.journal.write(() => {
      const acted = {sender: "+4915112345678", body: "ACK 4821", sentAt: null, part: null};
      inbound.store({simIndex: 1, form: "pdu", raw: "raw 1", message: acted, problem: null, storedAt: smsAt});
      inbound.store({simIndex: 2, form: "pdu", raw: "raw 2", message: null, problem: "cut short", storedAt: smsAt});
      inbound.markHandled(
        inbound.waiting().map((sms) => sms.id),
        smsAt
      );
    });
    const send = async (message: string) =>
      (
        await gw!.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: recipient, message, priority: "high"}
        })
      ).body.notification_uuid as string;
    const acknowledged = await send("acknowledged long ago");
    const resolved = await send("resolved long ago");
    const open = await send("still open");
    await gw.gateway.services.runner.idle();
    expect((await gw.call("POST", `/api/v1/notifications/${acknowledged}/ack`)).status).toBe(200);
    expect((await gw.call("POST", `/api/v1/notifications/${resolved}/resolve`)).status).toBe(200);
    // A receiver that is down: this notification's events wait in the outbox.
    expect(
      (await gw.call("POST", "/api/v1/webhooks", {body: {url: "http://127.0.0.1:9/hook", events: ["*"]}})).status
    ).toBe(201);
    const undelivered = await send("resolved, webhooks pending");
    await gw.gateway.services.runner.idle();
    expect((await gw.call("POST", `/api/v1/notifications/${undelivered}/resolve`)).status).toBe(200);
    await gw.gateway.services.runner.idle();
    expect(rowsFor(gw, acknowledged)).toMatchObject({notifications: 1, escalations: 1, events: expect.any(Number)});
    expect(rowsFor(gw, acknowledged).attempts).toBeGreaterThan(0);
    expect(rowsFor(gw, undelivered).outbox).toBeGreaterThan(0);

    clock.advance(29 * DAY);
    expect(await gw.gateway.operations.retention.prune()).toEqual({notifications: 0, audit: 0, incoming_sms: 0});
    clock.advance(2 * DAY);
    expect(await gw.gateway.operations.retention.prune()).toEqual({notifications: 2, audit: 0, incoming_sms: 0});

    for (const id of [acknowledged, resolved]) {
      expect((await gw.call("GET", `/api/v1/notifications/${id}`)).status).toBe(404);
      expect(rowsFor(gw, id)).toEqual({notifications: 0, escalations: 0, attempts: 0, events: 0, outbox: 0});
    }
    expect((await gw.call("GET", `/api/v1/notifications/${open}`)).body.status).toBe("notifying");
    expect((await gw.call("GET", `/api/v1/notifications/${undelivered}`)).body.status).toBe("resolved");
    expect(rowsFor(gw, undelivered).outbox).toBeGreaterThan(0);

    // Audit entries go after their own period; the ones written just now stay.
    const auditCount = () => (gw!.gateway.journal.db.prepare("SELECT COUNT(*) AS n FROM audit").get() as {n: number}).n;
    const before = auditCount();
    await gw.call("POST", "/api/v1/recipients", {body: {name: "Recent", email: "recent@factory.lan"}});
    clock.advance(30 * DAY);
    const pruned = await gw.gateway.operations.retention.prune();
    expect(pruned.audit).toBe(before);
    expect(auditCount()).toBe(1);
    // The SMS acted on went with them; the unreadable one, still on the SIM, stays.
    expect(pruned.incoming_sms).toBe(1);
    expect(gw.gateway.journal.db.prepare("SELECT sim_index, status FROM inbound_sms").all()).toEqual([
      {sim_index: 2, status: "unreadable"}
    ]);
    expect((await gw.call("GET", `/api/v1/notifications/${open}`)).status).toBe(200);
  });

  it("deletes a suppressed alert once its maintenance window is over, never one a window still holds", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    gw = await startTestGateway({retention: {notifications_days: 30, audit_days: 0}}, {clock});
    const recipient = async (name: string) =>
      (await gw!.call("POST", "/api/v1/recipients", {body: {name, email: `${name}@factory.lan`}})).body.uuid as string;
    const [kiln, press] = [await recipient("kiln"), await recipient("press")];
    const window = (scope: Record<string, unknown>, days: number) =>
      gw!.call("POST", "/api/v1/maintenance", {
        body: {ends_at: new Date(clock.now() + days * DAY).toISOString(), reason: "overhaul", ...scope}
      });
    expect((await window({targets: [kiln]}, 60)).status).toBe(201);
    expect((await window({sources: ["plc"]}, 1)).status).toBe(201);
    const send = async (to: string) =>
      (
        await gw!.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: to, message: "stopped", priority: "high", source: "plc"}
        })
      ).body.notification_uuid as string;
    const stillHeld = await send(kiln);
    const over = await send(press);

    clock.advance(31 * DAY);
    await gw.gateway.services.maintenance.releaser.tick();
    expect(await gw.gateway.operations.retention.prune()).toMatchObject({notifications: 1});
    expect((await gw.call("GET", `/api/v1/notifications/${over}`)).status).toBe(404);
    expect((await gw.call("GET", `/api/v1/notifications/${stillHeld}`)).body.status).toBe("suppressed");
    expect(gw.gateway.journal.db.prepare("SELECT notification_id FROM suppressions").pluck().all()).toEqual([
      stillHeld
    ]);
  });

  it("keeps everything when the days are 0", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    gw = await startTestGateway({retention: {notifications_days: 0, audit_days: 0}}, {clock});
    const recipient = (await gw.call("POST", "/api/v1/recipients", {body: {name: "Ops", email: "ops@factory.lan"}}))
      .body.uuid;
    const id = (
      await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message: "x", priority: "low"}
      })
    ).body.notification_uuid;
    await gw.gateway.services.runner.idle();
    await gw.call("POST", `/api/v1/notifications/${id}/resolve`);
    clock.advance(3650 * DAY);
    expect(await gw.gateway.operations.retention.prune()).toEqual({notifications: 0, audit: 0, incoming_sms: 0});
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).status).toBe(200);
  });
});
