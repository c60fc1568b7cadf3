import {afterEach, describe, expect, it} from "vitest";
import {makeRig, stopRig, T0, type Rig} from "../support/runner-rig.js";
import {ALL_CHANNELS_CONFIGURED} from "../support/gateway.js";

afterEach(stopRig);

const SMTP_DOWN = "SMTP server unreachable (connect ECONNREFUSED 127.0.0.1:25)";

interface Attempt {
  channel: string;
  step: number;
  outcome: string;
  error: string | null;
  started_at: string;
}

const outcomes = (n: {attempts: Attempt[]}) => n.attempts.map((a) => `${a.channel}#${a.step} ${a.outcome}`);

function eventsOf(r: Rig, id: string): Array<{type: string; sequence: number; data: any}> {
  const rows = r.gw.gateway.journal.db
    .prepare("SELECT body FROM events WHERE notification_id = ? ORDER BY sequence")
    .pluck()
    .all(id) as string[];
  return rows.map((body) => JSON.parse(body));
}

async function at(r: Rig, offsetMs: number): Promise<void> {
  r.clock.set(T0 + offsetMs);
  await r.tick();
}

describe("the paging guarantee", () => {
  it("keeps an alert whose only channel cannot be used waiting, says why, and mails it the moment SMTP is back", async () => {
    const r = await makeRig();
    r.email.unavailable = SMTP_DOWN;
    const maria = await r.recipient({email: "maria@factory.lan", channel_order: ["email"]});
    const id = await r.send(maria);
    await r.tick();
    let n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation.waiting_for).toEqual([{channel: "email", reason: SMTP_DOWN}]);
    expect(outcomes(n)).toEqual(["email#1 skipped"]);
    expect(r.gw.logLines.some((line) => line.includes("cannot reach anyone") && line.includes(id))).toBe(true);

    // An hour of looking again every minute: still open, and the skip is recorded once, not sixty times.
    for (let minute = 1; minute <= 60; minute++) await at(r, minute * 60_000);
    n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(outcomes(n)).toEqual(["email#1 skipped"]);

    r.email.unavailable = null;
    await r.runner().checkChannels();
    await r.runner().idle();
    n = await r.notification(id);
    expect(r.email.deliveries.map((d) => d.alerts[0].notification_id)).toEqual([id]);
    expect(n.escalation.waiting_for).toBeNull();
    expect(r.gw.logLines.some((line) => line.includes("waited for a channel is being delivered"))).toBe(true);
    // Only once its one step was carried does the chain end, after the ack timeout.
    await at(r, 61 * 60_000 + 60_000);
    expect((await r.notification(id)).status).toBe("exhausted");
  });

  it("passes over a blocked step to the next one it can carry, and carries the blocked one before the chain ends", async () => {
    const r = await makeRig();
    r.email.unavailable = SMTP_DOWN;
    const maria = await r.recipient({
      phone: "+4915112345678",
      email: "maria@factory.lan",
      channel_order: ["email", "voice_call"]
    });
    const id = await r.send(maria);
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    await at(r, 60_000);
    let n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation).toMatchObject({
      step: 2,
      steps_carried: 1,
      steps_total: 2,
      waiting_for: [{channel: "email", reason: SMTP_DOWN}]
    });
    r.email.unavailable = null;
    await at(r, 120_000);
    n = await r.notification(id);
    expect(outcomes(n)).toEqual(["email#1 skipped", "voice_call#2 sent", "email#1 sent"]);
    await at(r, 180_000);
    expect((await r.notification(id)).status).toBe("exhausted");
  });

  it("does not let one SMTP 550 silence email for the next alert: a high one waits, a critical one tries again", async () => {
    const r = await makeRig();
    r.email.script({kind: "fail", message: "550 5.1.1 mailbox unknown", permanent: true});
    const maria = await r.recipient({email: "maria@factory.lan", channel_order: ["email"]});
    const first = await r.send(maria);
    await r.tick();
    expect(outcomes(await r.notification(first))).toEqual(["email#1 failed"]);
    const high = await r.send(maria, "second", "high");
    const critical = await r.send(maria, "third", "critical");
    await r.tick();
    const waiting = await r.notification(high);
    expect(waiting.status).toBe("notifying");
    // Public on /readyz: the reason names neither the address nor the server's words about it.
    expect(waiting.escalation.waiting_for).toEqual([
      {channel: "email", reason: "contact marked unusable after a permanent failure (see the recipient)"}
    ]);
    expect(outcomes(await r.notification(critical))).toEqual(["email#1 sent"]);
    // The critical alert reached Maria: the address works after all, and the waiting alert goes out.
    await at(r, 60_000);
    expect(outcomes(await r.notification(high))).toEqual(["email#1 skipped", "email#1 sent"]);
  });

  it("moves a sequential group past a member in quiet hours at once, and pages that member when they end", async () => {
    const r = await makeRig();
    // 08:00-12:00 UTC: T0 (09:00 UTC) is inside.
    const quinn = await r.recipient({
      name: "Quinn",
      phone: "+4915100000001",
      channel_order: ["voice_call"],
      quiet_hours: {start: "08:00", end: "12:00", timezone: "UTC"}
    });
    const frank = await r.recipient({name: "Frank", phone: "+4915100000002", channel_order: ["voice_call"]});
    const group = await r.gw.call("POST", "/api/v1/groups", {
      body: {name: "Shift", members: [quinn, frank], strategy: "sequential"}
    });
    expect(group.status).toBe(201);
    const id = await r.send(group.body.uuid);
    await r.tick();
    expect(r.voice.deliveries.map((d) => d.contact)).toEqual(["+4915100000002"]);
    let n = await r.notification(id);
    expect(n.attempts.map((a: Attempt & {recipient_uuid: string}) => [a.recipient_uuid, a.outcome, a.error])).toEqual([
      [quinn, "deferred", "quiet hours until 2026-11-23T12:00:00.000Z"],
      [frank, "sent", null]
    ]);
    expect(n.attempts[1].detail).toBe("recorded");
    // Frank does not answer; the chain waits for Quinn's quiet hours to end rather than giving up.
    await at(r, 60_000);
    n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation).toMatchObject({waiting_for: null, next_step_at: "2026-11-23T12:00:00.000Z"});
    await at(r, 3 * 3600_000);
    expect(r.voice.deliveries.map((d) => d.contact)).toEqual(["+4915100000002", "+4915100000001"]);
  });

  it("records a lone recipient's quiet hours on the timeline with the time they will be paged", async () => {
    const r = await makeRig();
    const quinn = await r.recipient({
      phone: "+4915100000001",
      channel_order: ["voice_call"],
      quiet_hours: {start: "08:00", end: "12:00", timezone: "UTC"}
    });
    const id = await r.send(quinn);
    await r.tick();
    const n = await r.notification(id);
    expect(n.attempts.map((a: Attempt) => [a.outcome, a.error])).toEqual([
      ["deferred", "quiet hours until 2026-11-23T12:00:00.000Z"]
    ]);
    expect(n.escalation).toMatchObject({next_step_at: "2026-11-23T12:00:00.000Z", waiting_for: null});
    expect(r.voice.deliveries).toHaveLength(0);
  });

  it("gives an unrelated alert that joined a storm every page of its own plan", async () => {
    // Allowed to wait as long as the 60 s ack timeout, the newcomer joins the first chain's next step.
    const r = await makeRig({}, {...ALL_CHANNELS_CONFIGURED, storm: {max_join_delay_seconds: 60}});
    const maria = await r.recipient({
      phone: "+4915112345678",
      channel_order: ["voice_call"],
      escalation: {ack_timeout_seconds: 60, repeat: 1}
    });
    const first = await r.send(maria, "press 7 oil temperature high");
    await r.tick();
    r.clock.set(T0 + 3_000);
    const second = await r.send(maria, "cooling water flow low");
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    // Joined at the first chain's next step: one call names both.
    await at(r, 60_000);
    expect(
      r.voice.deliveries
        .at(-1)!
        .alerts.map((a) => a.notification_id)
        .sort()
    ).toEqual([first, second].sort());
    // The first chain ends; the second still has its own first page to make, and makes it at once.
    await at(r, 120_000);
    expect((await r.notification(first)).status).toBe("exhausted");
    expect(r.voice.deliveries.at(-1)!.alerts.map((a) => a.notification_id)).toEqual([second]);
    await at(r, 180_000);
    const n = await r.notification(second);
    expect(n.status).toBe("exhausted");
    expect(outcomes(n)).toEqual(["voice_call#2 sent", "voice_call#1 sent"]);
  });

  it("starts the next step after retry_after_failure_seconds when every attempt of a step failed", async () => {
    const r = await makeRig();
    r.voice.script({kind: "result", result: {outcome: "busy", detail: "the line was busy"}});
    const maria = await r.recipient({
      phone: "+4915112345678",
      email: "maria@factory.lan",
      escalation: {ack_timeout_seconds: 120, repeat: 0, retry_after_failure_seconds: 20}
    });
    const id = await r.send(maria);
    await r.tick();
    expect((await r.notification(id)).escalation.next_step_at).toBe(new Date(T0 + 20_000).toISOString());
    await at(r, 19_999);
    expect(r.email.deliveries).toHaveLength(0);
    await at(r, 20_000);
    expect(r.email.deliveries).toHaveLength(1);
    // A delivered step still waits the whole ack timeout.
    expect((await r.notification(id)).escalation.next_step_at).toBe(new Date(T0 + 140_000).toISOString());
  });

  it("refuses a retry wait longer than the ack timeout", async () => {
    const r = await makeRig();
    const answer = await r.gw.call("POST", "/api/v1/recipients", {
      body: {email: "a@b.lan", escalation: {ack_timeout_seconds: 60, retry_after_failure_seconds: 90}}
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      {pointer: "/escalation/retry_after_failure_seconds", detail: "must not exceed ack_timeout_seconds (60)"}
    ]);
  });

  it("tells the events in causal order, numbered, with each step's number and targets", async () => {
    const r = await makeRig();
    r.voice.unavailable = "modem not registered on the network";
    const maria = await r.recipient({
      phone: "+4915112345678",
      email: "maria@factory.lan",
      channel_order: ["email", "voice_call"]
    });
    const id = await r.send(maria);
    await r.tick();
    const events = eventsOf(r, id);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(events.map((event) => event.type)).toEqual(["escalation.started", "escalation.step", "notification.sent"]);
    expect(events[1].data.step).toEqual({
      number: 1,
      targets: [{recipient_uuid: maria, channel: "email", target: "m****@factory.lan"}]
    });
    expect(events[1].data.notification.status).toBe("notifying");
    await at(r, 60_000);
    const later = eventsOf(r, id)
      .slice(3)
      .map((event) => event.type);
    // The skipped call is told before the wait it causes; nothing is exhausted while it waits.
    expect(later).toEqual(["contact.failed"]);
  });
});
