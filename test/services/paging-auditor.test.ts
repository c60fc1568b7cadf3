import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  startTestGateway,
  tempDir,
  type TestGateway
} from "../support/gateway.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "../support/webhook-receiver.js";
import {logged, metric, readyz} from "../support/paging-guarantee-rig.js";
import {ManualClock} from "../../src/lib/clock.js";
import {newId} from "../../src/lib/ids.js";
import {checkGateway} from "../../src/cli/commands/doctor-checks.js";
import {selfCheck} from "../../src/services/operations/self-monitor-conditions.js";
import {auditVerdict} from "../../src/services/auditor/audit-question.js";
import type {AuditSuspect} from "../../src/store/journal/paging-audit.repository.js";

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const NO_PAGE = "paging auditor: no page carried 60 s after acceptance, and the journal records no reason to wait";

/**
 * Plants what no feature should ever leave behind: an accepted alert whose chain lost its wake-up
 * (running, nothing scheduled, no attempt, no recorded wait), written straight into the journal.
 */
function plantStuckAlert(gw: TestGateway, target: string, acceptedAtMs: number): string {
  const id = newId("notif", acceptedAtMs);
  const db = gw.gateway.journal.db;
  db.prepare(
    `INSERT INTO notifications (id, status, target_uuid, target_kind, message, priority, channels_planned, escalation_chain_id, created_at, updated_at)
     VALUES (?, 'queued', ?, 'recipient', 'Boiler 2 pressure high', 'critical', '["voice_call"]', ?, ?, ?)`
  ).run(id, target, `esc_${id.slice(6)}`, iso(acceptedAtMs), iso(acceptedAtMs));
  db.prepare(
    `INSERT INTO escalations (id, notification_id, policy, step, steps_total, next_step_at, generation, state, progress)
     VALUES (?, ?, '{"members": []}', 0, 1, NULL, 0, 'running', '{}')`
  ).run(`esc_${id.slice(6)}`, id);
  return id;
}

describe("the paging auditor, black-box", () => {
  const clock = new ManualClock(T0);
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  let stuck: string;
  let secret: string;

  let admin: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(clock);
    const dataDir = tempDir();
    const first = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock, dataDir});
    const hook = await first.call("POST", "/api/v1/webhooks", {
      body: {url: receiver.url, events: ["notification.undeliverable"]}
    });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
    admin = await createRecipient(first, {name: "Box admin", email: "admin@factory.lan"});
    stuck = plantStuckAlert(first, await createRecipient(first), T0);
    await first.gateway.stop();
    // The same data, started again a minute later with the box's admin paged by self-monitoring.
    clock.set(T0 + 61_000);
    gw = await startTestGateway({...ALL_CHANNELS_CONFIGURED, self_monitoring: {recipient: admin}}, {clock, dataDir});
  });
  afterAll(async () => {
    await gw.stop();
    await receiver.close();
  });

  it("makes an alert left with no page loud at start-up: /readyz 503, gauge, doctor, error log", async () => {
    const ready = await readyz(gw);
    expect(ready.status).toBe(503);
    expect(ready.body.undeliverable).toEqual({
      count: 1,
      reasons: [{channel: null, reason: NO_PAGE, notifications: 1, reached: 0}]
    });
    expect(ready.body.auditor).toMatchObject({running: true, last_pass_failed: false});
    expect(await metric(gw, "klaxon_notifications_undeliverable")).toBe(1);
    expect(logged(gw, "error", `${NO_PAGE} (1 alert)`)).toMatchObject([{notifications: [stuck]}]);
    const doctor = await checkGateway(gw.gateway.settings, gw.url, undefined, "test settings");
    expect(doctor.find((result) => result.name === "undeliverable")).toMatchObject({
      status: "fail",
      detail: `1 alert cannot reach anyone: ${NO_PAGE} (1 waiting)`
    });
  });

  it("emits notification.undeliverable once, with the auditor's reason, and pages nobody itself", async () => {
    await gw.gateway.operations.auditor.tick();
    await gw.gateway.webhooks.dispatcher.tick();
    const event = verifyDelivery(await receiver.next(), secret);
    expect(event).toMatchObject({
      type: "notification.undeliverable",
      data: {notification: {id: stuck, status: "queued"}, undeliverable: {reason: NO_PAGE, found_by: "paging_auditor"}}
    });
    const db = gw.gateway.journal.db;
    expect(db.prepare("SELECT COUNT(*) FROM events WHERE type = 'notification.undeliverable'").pluck().get()).toBe(1);
    expect(db.prepare("SELECT COUNT(*) FROM attempts WHERE notification_id = ?").pluck().get(stuck)).toBe(0);
  });

  it("pages the box's admin through self-monitoring, naming what the auditor found", async () => {
    await gw.gateway.operations.selfMonitor.tick();
    const pages = gw.gateway.journal.db
      .prepare("SELECT target_uuid, message FROM notifications WHERE dedup_key LIKE 'klaxon:undeliverable:audit:%'")
      .all();
    expect(pages).toEqual([
      {target_uuid: admin, message: expect.stringContaining(`1 alert cannot reach anyone: ${NO_PAGE}`)}
    ]);
  });

  it("names the finding as a self-monitoring condition of its own", () => {
    const conditions = selfCheck(
      {
        channels: [],
        outbox: {pending: 0, oldest: null},
        undeliverable: [{channel: null, reason: NO_PAGE, notifications: 1, reached: 0}],
        scheduleGaps: [],
        nowMs: T0
      },
      {signal_min_dbm: -105, outbox_max_age_minutes: 60}
    );
    expect(conditions).toContainEqual({
      key: expect.stringMatching(/^undeliverable:audit:[0-9a-f]{12}$/),
      problem: `1 alert cannot reach anyone: ${NO_PAGE}`
    });
  });

  it("ends the alarm once the alert is closed", async () => {
    expect((await gw.call("POST", `/api/v1/notifications/${stuck}/ack`, {body: {}})).status).toBe(200);
    await gw.gateway.operations.auditor.tick();
    const ready = await readyz(gw);
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect(await metric(gw, "klaxon_notifications_undeliverable")).toBe(0);
    expect(logged(gw, "info", "paging auditor: 1 alert no longer undeliverable")).toMatchObject([
      {notifications: [stuck]}
    ]);
  });
});

describe("the auditor's question", () => {
  const suspect = (fields: Partial<AuditSuspect> = {}): AuditSuspect => ({
    id: "ntf_1",
    status: "queued",
    priority: "high",
    created_at: iso(T0),
    has_chain: true,
    grouped: false,
    paged: false,
    released_at: null,
    deferred_until: null,
    ...fields
  });
  const at = (seconds: number, fields: Partial<AuditSuspect> = {}) =>
    auditVerdict(suspect(fields), T0 + seconds * 1000, 60);

  it("allows the deadline after acceptance, then fails an alert with no recorded reason", () => {
    expect(at(59)).toBeNull();
    expect(at(60)).toBe(NO_PAGE);
  });

  it("is satisfied by a page carried, however late", () => {
    expect(at(3600, {paged: true})).toBeNull();
  });

  it("accepts quiet hours that hold the priority until their end, then gives the deadline again", () => {
    const deferred_until = iso(T0 + 2 * 3600_000);
    expect(at(2 * 3600 + 59, {deferred_until})).toBeNull();
    expect(at(2 * 3600 + 60, {deferred_until})).toBe(NO_PAGE);
  });

  it("counts a maintenance release as the moment paging was due", () => {
    expect(at(3600 + 30, {released_at: iso(T0 + 3600_000)})).toBeNull();
    expect(at(3600 + 60, {released_at: iso(T0 + 3600_000)})).toBe(NO_PAGE);
  });

  it("fails an alert that ended exhausted with nobody paged, one with no chain, and one waiting in a storm", () => {
    expect(at(60, {status: "exhausted"})).toMatch(/exhausted\) without any page carried/);
    expect(at(60, {has_chain: false})).toMatch(/no escalation chain/);
    expect(at(60, {grouped: true})).toMatch(/waits behind another alert's page \(storm\)/);
  });
});
