import {afterEach, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import {makeRig, stopRig, T0} from "../support/runner-rig.js";

afterEach(stopRig);

const eventTypes = (gw: TestGateway, id: string) =>
  (
    gw.gateway.journal.db.prepare("SELECT type FROM events WHERE notification_id = ? ORDER BY id").all(id) as Array<{
      type: string;
    }>
  ).map((row) => row.type);

describe("escalation runner", () => {
  it("runs a chain step by step on its stored wake-ups, then exhausts it", async () => {
    const r = await makeRig();
    const maria = await r.recipient({name: "Maria", phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.tick();
    expect(r.voice.deliveries.map((d) => [d.contact, d.alerts.map((a) => a.notification_id)])).toEqual([
      ["+4915112345678", [id]]
    ]);
    let n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation).toEqual({
      step: 1,
      steps_carried: 1,
      steps_total: 2,
      next_step_at: new Date(T0 + 60_000).toISOString(),
      waiting_for: null,
      grouped_with: null
    });

    r.clock.set(T0 + 59_999);
    await r.tick();
    expect(r.email.deliveries).toHaveLength(0);

    r.clock.set(T0 + 60_000);
    await r.tick();
    expect(r.email.deliveries.map((d) => d.contact)).toEqual(["maria@factory.lan"]);

    r.clock.set(T0 + 120_000);
    await r.tick();
    n = await r.notification(id);
    expect(n.status).toBe("exhausted");
    expect(n.escalation.next_step_at).toBeNull();
    expect(
      n.attempts.map((a: {channel: string; step: number; outcome: string; started_at: string}) => [
        a.channel,
        a.step,
        a.outcome,
        a.started_at
      ])
    ).toEqual([
      ["voice_call", 1, "sent", new Date(T0).toISOString()],
      ["email", 2, "sent", new Date(T0 + 60_000).toISOString()]
    ]);
    expect(eventTypes(r.gw, id)).toEqual([
      "escalation.started",
      "escalation.step",
      "notification.sent",
      "escalation.step",
      "notification.sent",
      "escalation.exhausted"
    ]);
    const audit = await r.gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.exhausted`);
    expect(audit.body.items).toHaveLength(1);
    expect(r.voice.deliveries).toHaveLength(1);
  });

  it("skips an unavailable channel with its reason and moves on at once", async () => {
    const r = await makeRig();
    r.voice.unavailable = "modem not registered on the network";
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(0);
    expect(r.email.deliveries).toHaveLength(1);
    const n = await r.notification(id);
    expect(
      n.attempts.map((a: {channel: string; target: string; outcome: string; error: string | null}) => [
        a.channel,
        a.target,
        a.outcome,
        a.error
      ])
    ).toEqual([
      // A skipped step still says whom it would have reached, masked like any attempt's target.
      ["voice_call", "+49********678", "skipped", "modem not registered on the network"],
      ["email", "m****@factory.lan", "sent", null]
    ]);
    // A delivery's answer is its detail, not an error.
    expect(n.attempts[1].detail).toBe("recorded");
    expect(eventTypes(r.gw, id)).toContain("contact.failed");
  });

  it("records a failing channel's error and still moves on when the ack timeout passes", async () => {
    const r = await makeRig();
    r.voice.script({kind: "fail", message: "NO CARRIER", permanent: false});
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.tick();
    r.clock.set(T0 + 60_000);
    await r.tick();
    const n = await r.notification(id);
    expect(n.attempts.map((a: {outcome: string; error: string | null}) => [a.outcome, a.error])).toEqual([
      ["failed", "NO CARRIER"],
      ["sent", null]
    ]);
    expect(n.attempts[1].detail).toBe("recorded");
  });

  it("does nothing on a wake-up that comes after an acknowledgement", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.tick();
    expect((await r.gw.call("POST", `/api/v1/notifications/${id}/ack`)).status).toBe(200);
    r.clock.set(T0 + 60_000);
    await r.tick();
    expect(r.email.deliveries).toHaveLength(0);
    expect((await r.notification(id)).attempts).toHaveLength(1);
  });

  it("drops an attempt still waiting for the line when its alert is acknowledged meanwhile", async () => {
    const r = await makeRig();
    r.voice.script({kind: "hold"});
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const paul = await r.recipient({phone: "+4915187654321", email: "paul@factory.lan"});
    const first = await r.send(maria);
    await r.runner().tick();
    const second = await r.send(paul);
    await r.runner().tick();
    expect(r.voice.deliveries).toHaveLength(1);
    await r.gw.call("POST", `/api/v1/notifications/${second}/ack`);
    r.voice.held[0].release({outcome: "no_answer", detail: "NO ANSWER"});
    await r.runner().idle();
    expect(r.voice.deliveries).toHaveLength(1);
    expect((await r.notification(second)).attempts[0]).toMatchObject({
      outcome: "skipped",
      error: "closed before the attempt started"
    });
    expect((await r.notification(first)).attempts[0]).toMatchObject({outcome: "no_answer", error: "NO ANSWER"});
  });

  it("hangs up a call in progress when the alert is acknowledged elsewhere", async () => {
    const r = await makeRig();
    r.voice.script({kind: "hold"});
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.runner().tick();
    expect(r.voice.held).toHaveLength(1);
    await r.gw.call("POST", `/api/v1/notifications/${id}/ack`);
    await r.runner().idle();
    expect(r.voice.aborted).toHaveLength(1);
    expect((await r.notification(id)).attempts[0]).toMatchObject({
      outcome: "failed",
      error: "aborted: acknowledged or resolved elsewhere"
    });
  });

  it("never lets a hanging channel hold up another channel, and cuts it off after its timeout", async () => {
    const r = await makeRig({deliveryTimeoutMs: 300});
    r.voice.script({kind: "hang"});
    const maria = await r.recipient({phone: "+4915112345678", channel_order: ["voice_call"]});
    const paul = await r.recipient({email: "paul@factory.lan", channel_order: ["email"]});
    const stuck = await r.send(maria);
    const fine = await r.send(paul);
    await r.runner().tick();
    expect(r.email.deliveries).toHaveLength(1);
    expect(r.voice.deliveries).toHaveLength(1);
    await r.runner().idle();
    expect((await r.notification(fine)).attempts[0].outcome).toBe("sent");
    expect((await r.notification(stuck)).attempts[0]).toMatchObject({
      outcome: "failed",
      error: "aborted: no outcome within 300 ms"
    });
  });

  it("fires the next step at once when the person passes the alert on (key 9)", async () => {
    const r = await makeRig();
    r.voice.script({kind: "result", result: {outcome: "answered", detail: "key 9: passed on", passedOn: true}});
    const maria = await r.recipient({
      phone: "+4915112345678",
      email: "maria@factory.lan",
      channel_order: ["voice_call", "email"]
    });
    const id = await r.send(maria);
    // No clock advance: the email step is due because the call passed the alert on, not because a timeout expired.
    await r.tick();
    expect(r.email.deliveries).toHaveLength(1);
    expect(r.clock.now()).toBe(T0);
    expect(
      (await r.notification(id)).attempts.map((a: {channel: string; outcome: string}) => [a.channel, a.outcome])
    ).toEqual([
      ["voice_call", "answered"],
      ["email", "sent"]
    ]);
  });

  it("fires a due step exactly once after a restart in the middle of a chain", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.tick();
    await r.gw.restart();
    await r.runner().stop();
    r.clock.set(T0 + 60_000);
    await r.tick();
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    expect(r.email.deliveries).toHaveLength(1);
    expect((await r.notification(id)).attempts.map((a: {channel: string}) => a.channel)).toEqual([
      "voice_call",
      "email"
    ]);
  });

  it("records an attempt that was in flight when the gateway stopped, and never runs it twice", async () => {
    const r = await makeRig();
    r.voice.script({kind: "hold"});
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const id = await r.send(maria);
    await r.runner().tick();
    expect(r.voice.held).toHaveLength(1);
    await r.gw.restart();
    await r.runner().stop();
    // The old process's call ends after the restart: its late result must not overwrite the record.
    r.voice.held[0].release({outcome: "answered", detail: "late"});
    await r.tick();
    const n = await r.notification(id);
    // A clean stop cuts the call off and records it; only a crash leaves it to the next start.
    expect(n.attempts).toEqual([
      expect.objectContaining({channel: "voice_call", outcome: "failed", error: "aborted: the gateway is stopping"})
    ]);
    expect(r.voice.aborted).toHaveLength(1);
    expect(r.voice.deliveries).toHaveLength(1);
  });
});

describe("permanent channel failures", () => {
  it("marks the contact unavailable, skips it from then on, and forgets it when the contact changes", async () => {
    const r = await makeRig();
    r.email.script({kind: "fail", message: "550 mailbox does not exist", permanent: true});
    const maria = await r.recipient({email: "maria@factory.lan", telegram_id: "4242", channel_order: ["email"]});
    await r.send(maria);
    await r.tick();
    const recipient = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    const email = recipient.channels.find((channel: {channel: string}) => channel.channel === "email");
    expect(email.available).toBe(false);
    expect(email.reason).toBe(`permanent failure since ${new Date(T0).toISOString()}: 550 mailbox does not exist`);

    const second = await r.send(maria);
    await r.tick();
    expect(r.email.deliveries).toHaveLength(1);
    // The alert itself names no address (its reasons are public on /readyz); the recipient has the details.
    expect((await r.notification(second)).attempts[0]).toMatchObject({
      outcome: "skipped",
      error: "contact marked unusable after a permanent failure (see the recipient)"
    });

    await r.gw.call("PATCH", `/api/v1/recipients/${maria}`, {body: {email: "maria.k@factory.lan"}});
    const fixed = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body.channels.find(
      (channel: {channel: string}) => channel.channel === "email"
    );
    expect(fixed).toEqual({channel: "email", available: true, reason: null, verified_at: null});
    const third = await r.send(maria);
    await r.tick();
    expect(r.email.deliveries.map((delivery) => delivery.contact)).toEqual([
      "maria@factory.lan",
      "maria.k@factory.lan"
    ]);
    expect((await r.notification(third)).attempts[0].outcome).toBe("sent");
  });
});
