import {afterEach, describe, expect, it} from "vitest";
import {makeRig, stopRig, T0, type Rig} from "../support/runner-rig.js";
import {ALL_CHANNELS_CONFIGURED} from "../support/gateway.js";

afterEach(stopRig);

/** Newcomers may wait as long as these tests' 60 s ack timeouts: they join the paging chain's next step. */
const JOIN_NEXT_STEP = {...ALL_CHANNELS_CONFIGURED, storm: {max_join_delay_seconds: 60}};

/** Maria, with a phone and an email, called at T0 for a first alert: a storm's newcomers join that chain. */
async function mariaBeingPaged(): Promise<{r: Rig; maria: string; first: string}> {
  const r = await makeRig({}, JOIN_NEXT_STEP);
  const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
  const first = await r.send(maria, "press 7 oil temperature high");
  await r.tick();
  return {r, maria, first};
}

describe("escalation runner", () => {
  it("acknowledges every alert a grouped delivery carried when the person acknowledges it", async () => {
    const r = await makeRig();
    r.voice.script({kind: "acknowledge", by: "+4915112345678", result: {outcome: "answered", detail: "key 1 pressed"}});
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const ids = [await r.send(maria, "one"), await r.send(maria, "two"), await r.send(maria, "three", "critical")];
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    expect(r.voice.deliveries[0].alerts.map((a) => a.message)).toEqual(["one", "two", "three"]);
    await r.runner().idle();
    for (const id of ids) {
      const notification = await r.notification(id);
      expect(notification).toMatchObject({
        status: "acknowledged",
        acknowledged_via: "voice_call",
        acknowledged_by: "+4915112345678"
      });
      // The acknowledgement closed the alerts without cutting off the call that took it.
      expect(notification.attempts[0]).toMatchObject({channel: "voice_call", outcome: "answered"});
    }
    expect(r.voice.aborted).toHaveLength(0);
  });

  it("turns a storm of 10,000 alerts to one person into one call per escalation step", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const service = r.gw.gateway.services.notifications;
    const actor = {type: "system" as const, id: null};
    await Promise.all(
      Array.from({length: 10_000}, (_, i) =>
        service.send({recipient_uuid: maria, message: `sensor ${i} out of range`, priority: "high"}, actor)
      )
    );
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    expect(r.voice.deliveries[0].alerts).toHaveLength(10_000);
    r.clock.set(T0 + 60_000);
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    expect(r.email.deliveries).toHaveLength(1);
    expect(r.email.deliveries[0].alerts).toHaveLength(10_000);
  }, 120_000);

  it("holds alerts arriving while their person is being paged until that chain's next step, then pages once for all", async () => {
    const r = await makeRig({}, JOIN_NEXT_STEP);
    const maria = await r.recipient({
      phone: "+4915112345678",
      email: "maria@factory.lan",
      escalation: {ack_timeout_seconds: 60, repeat: 1}
    });
    const first = await r.send(maria, "press 7 oil temperature high");
    await r.tick();
    r.clock.set(T0 + 10_000);
    const later = [
      await r.send(maria, "press 7 hydraulic pressure low"),
      await r.send(maria, "press 7 guard door open")
    ];
    await r.tick();
    // Maria's phone already rang for this storm: the two newcomers wait for its next step.
    expect(r.voice.deliveries).toHaveLength(1);
    for (const id of later) expect((await r.notification(id)).attempts).toEqual([]);

    r.clock.set(T0 + 60_000);
    await r.tick();
    expect(r.email.deliveries.map((d) => d.alerts.map((a) => a.notification_id).sort())).toEqual([
      [first, ...later].sort()
    ]);
    expect(r.voice.deliveries).toHaveLength(1);
    // From here on the chains are aligned: each later step is again one delivery for all three.
    r.clock.set(T0 + 120_000);
    await r.tick();
    expect(r.voice.deliveries.slice(1).map((d) => d.alerts.length)).toEqual([3]);
  });

  it("stores a newcomer waiting for the paging chain's next step when it is accepted, and shows so in its answer and event", async () => {
    const {r, maria, first} = await mariaBeingPaged();
    r.clock.set(T0 + 10_000);
    const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "press 7 guard door open", priority: "high"},
      headers: {Prefer: "return=representation"}
    });
    expect(answer.status).toBe(200);
    // The first chain called at T0 and emails at T0 + 60 s (step 1): the newcomer waits for that
    // moment, takes up its own plan at that step, and calls later for the step it skipped ahead of.
    const joined = {
      step: 0,
      steps_carried: 0,
      steps_total: 2,
      next_step_at: new Date(T0 + 60_000).toISOString(),
      waiting_for: null,
      grouped_with: first
    };
    expect(answer.body.escalation).toEqual(joined);
    const chain = r.gw.gateway.journal.db
      .prepare(
        "SELECT grouped_with, step, next_step_at, json_extract(progress, '$.current') AS current FROM escalations WHERE notification_id = ?"
      )
      .get(answer.body.id);
    expect(chain).toEqual({grouped_with: first, step: 0, next_step_at: joined.next_step_at, current: 0});
    const started = r.gw.gateway.journal.db
      .prepare("SELECT body FROM events WHERE notification_id = ? AND type = 'escalation.started'")
      .pluck()
      .get(answer.body.id) as string;
    expect(JSON.parse(started).data.notification.escalation).toEqual(joined);
    // A more urgent alert never waits: it starts its own chain at once.
    const urgent = await r.gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "press 7 fire alarm", priority: "critical"},
      headers: {Prefer: "return=representation"}
    });
    expect(urgent.body.escalation).toEqual({
      step: 0,
      steps_carried: 0,
      steps_total: 2,
      next_step_at: new Date(T0 + 10_000).toISOString(),
      waiting_for: null,
      grouped_with: null
    });
  });

  it("never lets a newcomer join a chain acknowledged earlier in the same transaction", async () => {
    const {r, maria, first} = await mariaBeingPaged();
    r.clock.set(T0 + 5_000);
    const service = r.gw.gateway.services.notifications;
    const actor = {type: "system" as const, id: null};
    const send = async (message: string) =>
      (await service.send({recipient_uuid: maria, message, priority: "high"}, actor)).view;
    const chainOf = (id: string) =>
      r.gw.gateway.journal.db
        .prepare("SELECT grouped_with, step, next_step_at FROM escalations WHERE notification_id = ?")
        .get(id);
    // Queued together, so one group commit carries them in this order: join, acknowledge, send.
    const commits = r.gw.gateway.journal.stats.commits;
    const [before, , after] = await Promise.all([
      send("press 7 hydraulic pressure low"),
      service.acknowledge(first, {by: "maria", note: null, via: "api"}, actor),
      send("press 7 guard door open")
    ]);
    expect(r.gw.gateway.journal.stats.commits).toBe(commits + 1);
    expect(before.escalation.next_step_at).toBe(new Date(T0 + 60_000).toISOString());
    const now = {grouped_with: null, step: 0, next_step_at: new Date(T0 + 5_000).toISOString()};
    // The acknowledgement released the one that had joined, and the later one never joined.
    expect(chainOf(before.id)).toEqual(now);
    expect(chainOf(after.id)).toEqual(now);
    await r.tick();
    expect(r.voice.deliveries.map((d) => d.alerts.map((a) => a.notification_id).sort())).toEqual([
      [first],
      [before.id, after.id].sort()
    ]);
  });

  it("lets a newcomer wait behind a chain in its last step's window, then page on its own plan when that chain runs out", async () => {
    const r = await makeRig({}, JOIN_NEXT_STEP);
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const first = await r.send(maria, "first");
    await r.tick();
    r.clock.set(T0 + 60_000);
    await r.tick();
    // The first chain has run its last step (email) and waits out its window until T0 + 120 s.
    r.clock.set(T0 + 70_000);
    const second = await r.send(maria, "second");
    await r.tick();
    expect((await r.notification(second)).attempts).toEqual([]);
    expect(r.voice.deliveries).toHaveLength(1);
    r.clock.set(T0 + 120_000);
    await r.tick();
    expect((await r.notification(first)).status).toBe("exhausted");
    expect(
      (await r.notification(second)).attempts.map((a: {channel: string; step: number}) => [a.channel, a.step])
    ).toEqual([["voice_call", 1]]);
    // Now the second chain pages Maria: a third alert waits for its next step and shares it.
    r.clock.set(T0 + 130_000);
    const third = await r.send(maria, "third");
    await r.tick();
    expect((await r.notification(third)).attempts).toEqual([]);
    r.clock.set(T0 + 180_000);
    await r.tick();
    expect(
      r.email.deliveries
        .at(-1)!
        .alerts.map((a) => a.notification_id)
        .sort()
    ).toEqual([second, third].sort());
  });

  it("releases held alerts at once when the chain they waited for is acknowledged", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const first = await r.send(maria);
    await r.tick();
    r.clock.set(T0 + 5_000);
    const held = await r.send(maria, "press 7 guard door open");
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(1);
    expect((await r.gw.call("POST", `/api/v1/notifications/${first}/ack`, {body: {by: "maria"}})).status).toBe(200);
    await r.tick();
    expect(r.voice.deliveries.map((d) => d.alerts.map((a) => a.notification_id))).toEqual([[first], [held]]);
  });

  it("never holds an alert more urgent than the one being paged", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan", channel_order: ["email"]});
    await r.send(maria, "filter needs changing", "low");
    await r.tick();
    const urgent = await r.send(maria, "press 7 fire alarm", "critical");
    await r.tick();
    expect(r.email.deliveries.map((d) => d.alerts.map((a) => a.notification_id))).toHaveLength(2);
    expect(r.email.deliveries[1].alerts.map((a) => a.notification_id)).toEqual([urgent]);
  });
});
