import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {mailedAlerts} from "../support/fault-rig.js";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {
  attemptsOf,
  logged,
  metric,
  readyz,
  startGuaranteeRig,
  wallTime,
  type GuaranteeRig
} from "../support/paging-guarantee-rig.js";

// The paging guarantee (issue 16) as a user and a monitor meet it: every case the review saw,
// over HTTP against the production gateway, with the real SMTP server, the modem simulator and
// the Telegram stand-in going down and coming back. The gateway's clock is a manual one; the
// peers' own timeouts are real and short.

let rig: GuaranteeRig | null = null;
let bare: TestGateway | null = null;
afterEach(async () => {
  await rig?.stop();
  await bare?.stop();
  rig = bare = null;
});

const CONTACT_UNUSABLE = "contact marked unusable after a permanent failure (see the recipient)";
const ring = {outcome: "answer" as const, afterMs: 40, keys: []};

async function start(options: Parameters<typeof startGuaranteeRig>[0] = {}): Promise<GuaranteeRig> {
  rig = await startGuaranteeRig(options);
  return rig;
}

describe("an alert whose channels cannot be used", () => {
  it("waits while the SMTP server is down, says so on /readyz, /metrics and the log, and is mailed once when it is back", async () => {
    const r = await start();
    const maria = await r.person("Maria", ["email"]);
    // The gateway starts while the mail server is down: its first check finds it so.
    await r.smtp.down();
    await r.gw.restart();
    const down = await eventually(
      "email known to be failing",
      () => r.channel("email"),
      (state) => !state.available
    );

    const id = await r.alert(maria, "Oil temperature high", "high");
    const n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation.waiting_for).toEqual([{channel: "email", reason: down.reason}]);
    expect(down.reason).toMatch(/ECONNREFUSED/);
    const unready = await readyz(r.gw);
    expect(unready.status).toBe(503);
    expect(unready.body.undeliverable).toEqual({
      count: 1,
      reasons: [{channel: "email", reason: down.reason, notifications: 1, reached: 0}]
    });
    expect(await metric(r.gw, "klaxon_notifications_undeliverable")).toBe(1);
    expect(logged(r.gw, "warn", "an alert cannot reach anyone")).toEqual([expect.objectContaining({notification: id})]);

    await r.smtp.up();
    await eventually(
      "the waiting alert mailed",
      () => mailedAlerts(r),
      (alerts) => alerts.length > 0
    );
    const delivered = await r.notification(id);
    expect(delivered.attempts.map((attempt: {outcome: string}) => attempt.outcome)).toEqual(["skipped", "delivered"]);
    expect(delivered.escalation.waiting_for).toBeNull();
    expect((await readyz(r.gw)).status).toBe(200);
    expect(await metric(r.gw, "klaxon_notifications_undeliverable")).toBe(0);
    expect(logged(r.gw, "info", "an alert that waited for a channel is being delivered")).toHaveLength(1);
    // Once, not once per look while it waited.
    await r.at(r.clock.now() + 60_000);
    expect(mailedAlerts(r)).toEqual([id]);
  });

  it("does not end an alert nobody received because the SMTP server stopped unnoticed: it waits for email like the next one", async () => {
    const r = await start();
    const maria = await r.person("Maria", ["email"]);
    // The server dies while the gateway believes it works: the alert's own email is what finds out.
    await r.smtp.down();
    const id = await r.alert(maria, "Oil temperature high", "high");
    let n = await r.notification(id);
    expect(n.attempts).toMatchObject([
      {channel: "email", outcome: "failed", error: expect.stringMatching(/ECONNREFUSED/)}
    ]);
    expect((await r.channel("email")).available).toBe(false);
    await r.at(Date.parse(n.escalation.next_step_at));
    n = await r.notification(id);
    // Nobody was reached, and the reason is the gateway's channel, not the person: the alert must stay open and loud.
    expect(n.status).toBe("notifying");
    expect(n.escalation.waiting_for).toEqual([{channel: "email", reason: expect.stringMatching(/ECONNREFUSED/)}]);
    expect((await readyz(r.gw)).status).toBe(503);
    await r.smtp.up();
    await eventually(
      "the alert mailed",
      () => mailedAlerts(r),
      (alerts) => alerts.length > 0
    );
    expect(mailedAlerts(r)).toEqual([id]);
  });

  it("waits while the modem is unplugged and rings the phone once it is plugged back", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: ring}}});
    const frank = await r.person("Frank", ["voice_call"]);
    await r.modem!.unplug();
    await eventually(
      "the modem known to be gone",
      () => r.channel("voice_call"),
      (state) => !state.available
    );

    const id = await r.alert(frank, "Press 7 stopped", "high");
    expect((await r.notification(id)).escalation.waiting_for).toEqual([
      {channel: "voice_call", reason: expect.stringMatching(/modem/)}
    ]);
    expect((await readyz(r.gw)).body.undeliverable.count).toBe(1);

    await r.modem!.plug();
    await eventually(
      "Frank's phone rings",
      () => r.dialled(),
      (numbers) => numbers.length > 0,
      15_000
    );
    expect(r.dialled()).toEqual([r.contacts("Frank").phone]);
    await eventually(
      "the call recorded",
      () => r.notification(id),
      (n) => n.attempts.at(-1).outcome === "answered"
    );
    expect((await readyz(r.gw)).status).toBe(200);
  });

  it("waits, with no channel in its plan, on a gateway with no channel configured at all, and a repeat with its dedup_key merges into it", async () => {
    bare = await startTestGateway({}, {drivers: "production"});
    expect(logged(bare, "warn", "no channel is configured")).toHaveLength(1);
    const ana = await createRecipient(bare, {name: "Ana", channel_order: ["voice_call", "email"]});
    const send = () =>
      bare!.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: ana, message: "Press 4 stopped", priority: "high", dedup_key: "press-4"}
      });
    const first = await send();
    expect(first.status).toBe(202);
    await bare.gateway.services.runner.idle();
    const n = (await bare.call("GET", `/api/v1/notifications/${first.body.notification_uuid}`)).body;
    // Neither channel is configured, so both are left out: the plan has no channel, and nothing was tried.
    expect(n.status).toBe("queued");
    expect(n.channels_left_out.map((out: {channel: string}) => out.channel)).toEqual(["voice_call", "email"]);
    expect(n.escalation.waiting_for).toEqual([
      {
        channel: null,
        reason: expect.stringMatching(/^no channel in the plan for priority high \(left out: voice_call, /)
      }
    ]);
    expect(logged(bare, "warn", "an alert cannot reach anyone")).toHaveLength(1);
    expect((await readyz(bare)).status).toBe(503);

    const repeat = await send();
    expect(repeat.status).toBe(202);
    expect(repeat.body.notification_uuid).toBe(first.body.notification_uuid);
    const merged = (await bare.call("GET", `/api/v1/notifications/${first.body.notification_uuid}`)).body;
    expect(merged).toMatchObject({status: "queued", occurrences: 2});
    expect((await readyz(bare)).body.undeliverable.count).toBe(1);
  });
});

describe("a contact marked unusable by one SMTP 550", () => {
  it("keeps the next high alert waiting without naming the address, and tries email again for a critical one", async () => {
    const r = await start();
    const olga = await r.person("Olga", ["email"]);
    const address = r.contacts("Olga").email;
    r.smtp.rejectRecipient(address);
    const first = await r.alert(olga, "Oil temperature high", "high");
    expect((await r.notification(first)).attempts).toMatchObject([
      {channel: "email", outcome: "failed", error: expect.stringMatching(/550/)}
    ]);

    const high = await r.alert(olga, "Cooling water low", "high");
    const waiting = await r.notification(high);
    expect(waiting.status).toBe("notifying");
    expect(waiting.escalation.waiting_for).toEqual([{channel: "email", reason: CONTACT_UNUSABLE}]);
    const unready = await readyz(r.gw);
    expect(unready.status).toBe(503);
    expect(JSON.stringify(unready.body)).not.toContain(address);
    expect((await r.gw.call("GET", `/api/v1/recipients/${olga}`)).body.contact_failures).toMatchObject([
      {channel: "email"}
    ]);

    // The mailbox is fixed on the server; a critical alert does not trust the mark and gets through.
    r.smtp.acceptRecipient(address);
    const critical = await r.alert(olga, "Press 7 fire alarm", "critical");
    expect(attemptsOf(await r.notification(critical))).toEqual([[olga, "email", "delivered"]]);
    expect((await r.gw.call("GET", `/api/v1/recipients/${olga}`)).body.contact_failures).toEqual([]);
    // The waiting alert looks again within a minute and goes out too.
    await r.at(r.clock.now() + 60_000);
    expect((await r.notification(high)).attempts.map((attempt: {outcome: string}) => attempt.outcome)).toEqual([
      "skipped",
      "delivered"
    ]);
    expect(mailedAlerts(r)).toEqual([critical, high]);
  });
});

describe("quiet hours", () => {
  const ZONE = "Asia/Kolkata";
  /** Quiet from an hour ago until two hours from now on the zone's wall clock; returns when they end. */
  const quietNow = (r: GuaranteeRig) => {
    const now = r.clock.now();
    const end = Math.floor((now + 2 * 3600_000) / 60_000) * 60_000;
    return {
      quiet_hours: {start: wallTime(now - 3600_000, ZONE), end: wallTime(end, ZONE), timezone: ZONE},
      endsAt: new Date(end).toISOString()
    };
  };

  it("move a sequential group past the quiet member at once: Frank's phone rings, Quinn's attempt is deferred with the time", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: ring}}});
    const {quiet_hours, endsAt} = quietNow(r);
    const quinn = await r.person("Quinn", ["voice_call"], {quiet_hours});
    const frank = await r.person("Frank", ["voice_call"]);
    const group = await r.gw.call("POST", "/api/v1/groups", {
      body: {name: "Night shift", members: [quinn, frank], strategy: "sequential"}
    });
    expect(group.status).toBe(201);

    const id = await r.alert(group.body.uuid, "Line 2 stopped", "high");
    const n = await r.notification(id);
    expect(r.dialled()).toEqual([r.contacts("Frank").phone]);
    expect(n.attempts.map((a: any) => [a.recipient_uuid, a.outcome, a.error])).toEqual([
      [quinn, "deferred", `quiet hours until ${endsAt}`],
      [frank, "answered", null]
    ]);
    // The call's answer is the attempt's detail; error is for failures.
    expect(n.attempts[1].detail).toEqual(expect.any(String));
    expect(n.status).toBe("notifying");
  });

  it("put a lone recipient's deferral on the timeline with the time they will be paged", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: ring}}});
    const {quiet_hours, endsAt} = quietNow(r);
    const quinn = await r.person("Quinn", ["voice_call"], {quiet_hours});
    const id = await r.alert(quinn, "Line 2 stopped", "high");
    const n = await r.notification(id);
    expect(n.attempts.map((a: any) => [a.channel, a.outcome, a.error])).toEqual([
      ["voice_call", "deferred", `quiet hours until ${endsAt}`]
    ]);
    expect(n.escalation).toMatchObject({next_step_at: endsAt, waiting_for: null});
    expect(r.dialled()).toEqual([]);
    // Undeliverable is for channels that cannot be used, not for policy.
    expect((await readyz(r.gw)).status).toBe(200);
  });
});

describe("an alert storm", () => {
  /** Two unrelated high alerts to Maria (one call per step, repeat 1 = two pages each), the second 3 s after the first. */
  async function stormOfTwo(r: GuaranteeRig): Promise<{first: string; second: string}> {
    const maria = await r.person("Maria", ["voice_call"], {escalation: {repeat: 1}});
    const first = await r.alert(maria, "Oil temperature high", "high");
    expect(r.dialled()).toHaveLength(1);
    r.clock.advance(3_000);
    const second = await r.alert(maria, "Cooling water flow low", "high");
    // It does not get a call of its own at once: it joins the first one's next call.
    expect(r.dialled()).toHaveLength(1);
    expect((await r.notification(second)).attempts).toEqual([]);
    await r.at(Date.parse((await r.notification(first)).escalation.next_step_at));
    expect(r.dialled()).toHaveLength(2);
    const shared = r.spoken().at(-1)!;
    expect(shared).toContain("Oil temperature high");
    expect(shared).toContain("Cooling water flow low");
    expect((await r.notification(second)).attempts.map((a: any) => a.outcome)).toEqual(["answered"]);
    return {first, second};
  }

  /** The second alert's own remaining page comes when its step is due, naming it alone, and only then does it exhaust. */
  async function expectEveryPageOf(r: GuaranteeRig, second: string): Promise<void> {
    await r.at(Date.parse((await r.notification(second)).escalation.next_step_at));
    expect(r.dialled()).toHaveLength(3);
    expect(r.spoken().at(-1)).toContain("Cooling water flow low");
    expect(r.spoken().at(-1)).not.toContain("Oil temperature high");
    let n = await r.notification(second);
    expect(n.status).toBe("notifying");
    await r.at(Date.parse(n.escalation.next_step_at));
    n = await r.notification(second);
    expect(n.status).toBe("exhausted");
    expect(n.attempts.map((a: any) => [a.channel, a.outcome])).toEqual([
      ["voice_call", "answered"],
      ["voice_call", "answered"]
    ]);
  }

  it("names a second alert in the first one's next call and still gives it every page of its own plan before it exhausts", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: ring}}});
    const {first, second} = await stormOfTwo(r);
    await expectEveryPageOf(r, second);
    expect((await r.notification(first)).status).toBe("exhausted");
    expect(r.dialled()).toHaveLength(3);
  });

  it("does not take the second alert's pages away when the first is acknowledged", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: ring}}});
    const {first, second} = await stormOfTwo(r);
    expect((await r.gw.call("POST", `/api/v1/notifications/${first}/ack`)).status).toBe(200);
    await r.gw.gateway.services.runner.idle();
    await expectEveryPageOf(r, second);
    expect(r.dialled()).toHaveLength(3);
  });
});

describe("a step whose every attempt failed", () => {
  it("moves on to email after retry_after_failure_seconds when the line is busy, not after the ack timeout", async () => {
    const r = await start({modem: {dialect: "sim7600", script: {call: {outcome: "busy", afterMs: 40, keys: []}}}});
    const maria = await r.person("Maria", ["voice_call", "email"], {escalation: {retry_after_failure_seconds: 4}});
    const id = await r.alert(maria, "Oil temperature high", "high");
    let n = await r.notification(id);
    expect(n.attempts.map((a: any) => [a.channel, a.outcome])).toEqual([["voice_call", "busy"]]);
    const retryAt = Date.parse(n.attempts[0].finished_at) + 4_000;
    expect(n.escalation.next_step_at).toBe(new Date(retryAt).toISOString());

    await r.at(retryAt - 1);
    expect(r.smtp.messages).toEqual([]);
    await r.at(retryAt);
    n = await r.notification(id);
    expect(n.attempts.map((a: any) => [a.channel, a.outcome])).toEqual([
      ["voice_call", "busy"],
      ["email", "delivered"]
    ]);
    expect(mailedAlerts(r)).toEqual([id]);
    // A delivered step still waits the whole ack timeout.
    expect(n.escalation.next_step_at).toBe(new Date(retryAt + 15_000).toISOString());
  });
});

describe("events", () => {
  it("arrive numbered in causal order, with each step's number and targets, while Telegram goes down and comes back", async () => {
    const r = await start({telegram: true});
    const maria = await r.person("Maria", ["telegram_voice", "email"]);
    await r.telegram!.cutWan("refuse");
    await eventually(
      "Telegram known to be offline",
      () => r.channel("telegram_voice"),
      (state) => !state.available
    );

    const id = await r.alert(maria, "Oil temperature high", "high");
    expect((await r.notification(id)).attempts.map((a: any) => [a.channel, a.outcome])).toEqual([
      ["telegram_voice", "skipped"],
      ["email", "delivered"]
    ]);
    await r.telegram!.restoreWan();
    await eventually(
      "Telegram back",
      () => r.channel("telegram_voice"),
      (state) => state.available
    );
    // The skipped Telegram step is carried now that it can be, then the chain ends.
    let n = await r.notification(id);
    await r.at(Date.parse(n.escalation.next_step_at));
    n = await r.notification(id);
    expect(n.attempts.map((a: any) => [a.channel, a.outcome])).toEqual([
      ["telegram_voice", "skipped"],
      ["email", "delivered"],
      ["telegram_voice", "delivered"]
    ]);
    await r.at(Date.parse(n.escalation.next_step_at));
    expect((await r.notification(id)).status).toBe("exhausted");

    const events = await r.events(id);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(events.map((event) => [event.type, event.data.attempt?.channel ?? null])).toEqual([
      ["escalation.started", null],
      ["contact.failed", "telegram_voice"],
      ["escalation.step", null],
      ["notification.sent", "email"],
      ["notification.delivered", "email"],
      ["escalation.step", null],
      ["notification.sent", "telegram_voice"],
      ["notification.delivered", "telegram_voice"],
      ["escalation.exhausted", null]
    ]);
    const steps = events.filter((event) => event.type === "escalation.step").map((event) => event.data.step);
    expect(steps).toEqual([
      {
        number: 2,
        targets: [{recipient_uuid: maria, channel: "email", target: expect.stringMatching(/@factory\.lan$/)}]
      },
      {number: 1, targets: [{recipient_uuid: maria, channel: "telegram_voice", target: expect.any(String)}]}
    ]);
    await r.expectEveryEventDeliveredOnce();
  });
});
