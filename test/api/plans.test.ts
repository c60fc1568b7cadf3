import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {RecipientsRepository} from "../../src/store/config/repositories.js";
import {checkGateway} from "../../src/cli/commands/doctor-checks.js";
import {emailRig, stopEmailRigs} from "../channels/email-rig.js";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, type TestGateway} from "../support/gateway.js";
import {logged, metric, readyz} from "../support/paging-guarantee-rig.js";

// Issue 30, "What was seen" 1, 2 and 5, black-box over HTTP: a plan never ends with no step
// (refused at write time, else undeliverable and loud), a channel the box has never had is left
// out of plans rather than blocking them, and an on-call person is paged through quiet hours.
stopEmailRigs();

const NOON = Date.parse("2026-03-10T12:00:00Z");

describe("a channel the box has never had", () => {
  it("is left out of the README's example recipient's plan: the email goes out, nothing waits, /readyz stays 200", async () => {
    const clock = new ManualClock(NOON);
    const {gw, peer} = await emailRig({gateway: {clock}});
    const maria = await gw.call("POST", "/api/v1/recipients", {
      body: {name: "Maria", phone: "+4915112345678", email: "maria@factory.lan"}
    });
    expect(maria.status).toBe(201);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      headers: {Prefer: "return=representation"},
      body: {recipient_uuid: maria.body.uuid, message: "Press 7 hydraulic oil over 80 °C", priority: "critical"}
    });
    expect(sent.status).toBe(200);
    expect(sent.body.channels_planned).toEqual(["email"]);
    expect(sent.body.channels_left_out).toEqual([
      {channel: "voice_call", recipient_uuid: maria.body.uuid, reason: "no modem is configured (modem.port)"}
    ]);
    const runner = gw.gateway.services.runner;
    const id = sent.body.id;

    expect((await peer.next()).envelope.to).toEqual(["maria@factory.lan"]);
    await runner.idle();
    let alert = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(alert).toMatchObject({status: "notifying", escalation: {waiting_for: null}});
    const ready = await readyz(gw);
    expect(ready.status).toBe(200);
    expect(ready.body.plan_warnings).toEqual([
      expect.objectContaining({
        kind: "channel_not_configured",
        detail:
          "1 recipient has phone numbers but no modem is configured (modem.port): those channels are left out of their plans"
      })
    ]);

    // The default escalation mails twice (repeat 1), two minutes apart, then the chain ends.
    clock.advance(120_000);
    await runner.tick();
    expect((await peer.next()).envelope.to).toEqual(["maria@factory.lan"]);
    clock.advance(120_000);
    await runner.tick();
    await runner.idle();
    alert = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(alert.status).toBe("exhausted");
    expect((await readyz(gw)).status).toBe(200);
  });
});

describe("no plan without a step; on call means reachable", () => {
  let gw: TestGateway;
  const clock = new ManualClock(NOON);
  const send = async (target: string, priority: string) => {
    const answer = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: target, message: "Press 9 light curtain fault", priority}
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    await gw.gateway.services.runner.idle();
    return (await gw.call("GET", `/api/v1/notifications/${answer.body.notification_uuid}`)).body;
  };
  const person = async (name: string, fields: Record<string, unknown> = {}) => {
    const answer = await gw.call("POST", "/api/v1/recipients", {
      body: {name, email: `${name.toLowerCase()}@plant.lan`, phone: "+4915112345678", ...fields}
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.uuid as string;
  };

  beforeAll(async () => {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock});
  });
  afterAll(async () => {
    await gw.stop();
  });

  it("refuses, at write time, a routing rule that leaves critical with no channel, naming the priority and why", async () => {
    const before = (await gw.call("GET", "/api/v1/recipients")).body.items.length;
    const refused = await gw.call("POST", "/api/v1/recipients", {
      body: {
        name: "Jonas",
        phone: "+4915112345678",
        email: "jonas@plant.lan",
        channel_order: ["voice_call", "email"],
        routing_rules: [{priorities: ["critical"], channels: ["sms"]}]
      }
    });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body).toMatchObject({code: "priority_without_channel"});
    expect(refused.body.errors).toEqual([
      {
        pointer: "/routing_rules/0",
        detail:
          "priority critical has no channel: its routing rules allow only sms, and channel_order (voice_call, email) holds none of them"
      }
    ]);
    expect((await gw.call("GET", "/api/v1/recipients")).body.items).toHaveLength(before);

    const jonas = await person("Jonas", {channel_order: ["voice_call", "email"]});
    const patched = await gw.call("PATCH", `/api/v1/recipients/${jonas}`, {
      body: {routing_rules: [{priorities: ["high", "critical"], channels: ["sms"]}]}
    });
    expect(patched.status).toBe(422);
    expect(patched.body.errors.map((error: {detail: string}) => error.detail.split(":")[0])).toEqual([
      "priority critical has no channel",
      "priority high has no channel"
    ]);
  });

  it("makes an alert whose plan has no channel left undeliverable and loud, and pages once a contact is back", async () => {
    const uuid = await person("Petra", {phone: null, channel_order: ["email"]});
    // A contact removed behind the API's back (a config written before the rule, or edited by hand).
    const repository = new RecipientsRepository(gw.gateway.config);
    const petra = repository.get(uuid)!;
    await repository.replace({...petra, email: null, phone: "+4915112345678"});

    const alert = await send(uuid, "critical");
    expect(alert.status).toBe("queued");
    expect(alert.escalation.waiting_for).toEqual([
      {channel: null, reason: "no channel in the plan for priority critical"}
    ]);
    const ready = await readyz(gw);
    expect(ready.status).toBe(503);
    expect(ready.body.undeliverable).toEqual({
      count: 1,
      reasons: [{channel: null, reason: "no channel in the plan for priority critical", notifications: 1, reached: 0}]
    });
    expect(await metric(gw, "klaxon_notifications_undeliverable")).toBe(1);
    expect(logged(gw, "warn", "an alert cannot reach anyone")).toEqual([
      expect.objectContaining({notification: alert.id, waiting_for: "no channel in the plan for priority critical"})
    ]);
    const doctor = await checkGateway(gw.gateway.settings, gw.url, gw.adminKey, "test settings");
    expect(doctor).toEqual(
      expect.arrayContaining([
        {
          name: "undeliverable",
          status: "fail",
          detail: "1 alert cannot reach anyone: no channel in the plan for priority critical (1 waiting)"
        },
        {
          name: "plans",
          status: "warn",
          detail: expect.stringContaining("recipient Petra: priority critical has no channel")
        }
      ])
    );
    // Nor may a group name her now.
    const group = await gw.call("POST", "/api/v1/groups", {body: {name: "Shift B", members: [uuid]}});
    expect(group.status).toBe(422);
    expect(group.body.errors[0]).toMatchObject({
      pointer: "/members/0",
      detail: expect.stringContaining("recipient Petra")
    });

    await repository.replace({...petra, email: "petra@plant.lan"});
    clock.advance(60_000);
    await gw.gateway.services.runner.tick();
    await gw.gateway.services.runner.idle();
    const paged = (await gw.call("GET", `/api/v1/notifications/${alert.id}`)).body;
    expect(paged).toMatchObject({status: "notifying", escalation: {waiting_for: null}});
    expect(paged.attempts.map((attempt: {channel: string}) => attempt.channel)).toEqual(["email"]);
    expect((await readyz(gw)).status).toBe(200);
    await gw.call("POST", `/api/v1/notifications/${alert.id}/ack`);
  });

  it("pages the on-call person through quiet hours for a high alert; a low one goes to the fallback", async () => {
    const quietAllDay = {start: "00:00", end: "23:59", timezone: "UTC"};
    const maria = await person("Maria", {quiet_hours: quietAllDay, channel_order: ["email"]});
    const fallback = await person("Hans", {channel_order: ["email"]});
    const schedule = await gw.call("POST", "/api/v1/schedules", {
      body: {
        name: "Line 3",
        timezone: "UTC",
        layers: [{type: "rotation", members: [maria], starts_at: "2026-03-01T00:00:00Z", shift_length_days: 7}],
        fallback
      }
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);

    const high = await send(schedule.body.uuid, "high");
    expect(high.escalation.waiting_for).toBeNull();
    expect(high.attempts.map((attempt: any) => [attempt.recipient_uuid, attempt.outcome])).toEqual([
      [maria, expect.not.stringMatching(/^(deferred|skipped)$/)]
    ]);
    await gw.call("POST", `/api/v1/notifications/${high.id}/ack`);

    const low = await send(schedule.body.uuid, "low");
    expect(low.escalation.waiting_for).toBeNull();
    expect(low.attempts.map((attempt: any) => attempt.recipient_uuid)).toEqual([fallback]);
    await gw.call("POST", `/api/v1/notifications/${low.id}/ack`);
  });
});
