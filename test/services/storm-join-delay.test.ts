import {afterEach, describe, expect, it} from "vitest";
import {makeRig, stopRig, T0, type Rig} from "../support/runner-rig.js";
import {spokenAlerts} from "../../src/channels/speech/spoken-alert.js";

afterEach(stopRig);

const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

/** When the phone rang (seconds after T0) and for which of the given alerts. */
function calls(r: Rig, names: Record<string, string>): Array<[number, string[]]> {
  return r.voice.deliveries.map((delivery) => [
    (r.clock.now() - T0) / 1000,
    delivery.alerts.map((alert) => names[alert.notification_id] ?? alert.notification_id)
  ]);
}

/** Maria, called first and emailed only after a 600 s ack timeout. */
const mariaWaitingOutAckTimeouts = (r: Rig) =>
  r.recipient({
    name: "Maria",
    phone: "+4915112345678",
    email: "maria@factory.lan",
    escalation: {ack_timeout_seconds: 600, repeat: 0}
  });

describe("a storm's newcomer and storm.max_join_delay_seconds (30 s)", () => {
  it("names a newcomer in a page within 30 s though the paging chain waits out a 600 s ack timeout", async () => {
    const r = await makeRig();
    const maria = await mariaWaitingOutAckTimeouts(r);
    const seen: Array<[number, string[]]> = [];
    const names: Record<string, string> = {};
    const tickAt = async (seconds: number) => {
      r.clock.set(T0 + seconds * 1000);
      const before = r.voice.deliveries.length;
      await r.tick();
      seen.push(...calls(r, names).slice(before));
    };
    const send = async (name: string, seconds: number) => {
      r.clock.set(T0 + seconds * 1000);
      const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: maria, message: name, priority: "high"},
        headers: {Prefer: "return=representation"}
      });
      expect(answer.status).toBe(200);
      names[answer.body.id] = name;
      await tickAt(seconds);
      return answer.body;
    };

    const oil = await send("press 7 oil temperature high", 0);
    expect(seen).toEqual([[0, ["press 7 oil temperature high"]]]);
    // Its next step (the email) is 600 s away: the newcomer does not wait for it. Maria was
    // called 5 s ago, so it is paged 30 s after that call, with whatever else comes meanwhile,
    // and the call names her other open alert too: she hears the whole picture.
    const curtain = await send("press 9 light curtain fault", 5);
    expect(curtain.status).toBe("queued");
    expect(curtain.escalation).toMatchObject({next_step_at: at(30), grouped_with: oil.id});
    await tickAt(29);
    expect(seen).toHaveLength(1);
    await tickAt(30);
    expect(seen).toEqual([
      [0, ["press 7 oil temperature high"]],
      [30, ["press 9 light curtain fault", "press 7 oil temperature high"]]
    ]);

    // Two more within the next 30 s share one call at 60 s: one page per 30 s, not one per alert.
    await send("press 9 guard door open", 40);
    await send("line 3 heartbeat missed", 50);
    await tickAt(60);
    expect(seen.slice(2)).toEqual([
      [
        60,
        [
          "press 9 guard door open",
          "line 3 heartbeat missed",
          "press 9 light curtain fault",
          "press 7 oil temperature high"
        ]
      ]
    ]);

    // Maria was not paged in the last 30 s: the next one pages at once.
    await send("press 9 hydraulic pressure low", 200);
    expect(seen.slice(3)).toEqual([
      [
        200,
        [
          "press 9 hydraulic pressure low",
          "line 3 heartbeat missed",
          "press 9 guard door open",
          "press 9 light curtain fault",
          "press 7 oil temperature high"
        ]
      ]
    ]);
    // The first alert's own chain goes on as planned: its email at 600 s.
    await tickAt(600);
    expect(r.email.deliveries.map((d) => d.alerts.map((a) => names[a.notification_id]))).toContainEqual([
      "press 7 oil temperature high"
    ]);
  });

  it("joins the paging chain's next step when that comes within 30 s: one call for both", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", email: "maria@factory.lan"});
    const first = await r.send(maria, "press 7 oil temperature high");
    await r.tick();
    // Its next step is at 60 s: a newcomer at 45 s waits 15 s and shares it.
    r.clock.set(T0 + 45_000);
    const second = await r.send(maria, "press 7 guard door open");
    await r.tick();
    expect((await r.notification(second)).escalation).toMatchObject({next_step_at: at(60), grouped_with: first});
    r.clock.set(T0 + 60_000);
    await r.tick();
    expect(r.email.deliveries.map((d) => d.alerts.map((a) => a.notification_id).sort())).toEqual([
      [first, second].sort()
    ]);
    expect(r.voice.deliveries).toHaveLength(1);
  });

  it("a key press on the page forced at 30 s acknowledges both alerts it names and stops both chains", async () => {
    const r = await makeRig();
    const maria = await mariaWaitingOutAckTimeouts(r);
    const oil = await r.send(maria, "press 7 oil temperature high");
    await r.tick();
    r.clock.set(T0 + 5_000);
    const curtain = await r.send(maria, "press 9 light curtain fault");
    await r.tick();
    // Maria presses 1 during the call at 30 s: the newcomer's own page, naming her first alert too.
    r.voice.script({kind: "acknowledge", by: "+4915112345678", result: {outcome: "answered", detail: "key 1"}});
    r.clock.set(T0 + 30_000);
    await r.tick();
    const chainState = r.gw.gateway.journal.db
      .prepare("SELECT state FROM escalations WHERE notification_id = ?")
      .pluck();
    const page = r.voice.deliveries[1];
    expect(page.alerts.map((alert) => alert.notification_id)).toEqual([curtain, oil]);
    expect(spokenAlerts(page.alerts)).toMatch(/2 alerts.*light curtain fault.*oil temperature high/);
    for (const id of [oil, curtain]) {
      const alert = await r.notification(id);
      expect(alert.status).toBe("acknowledged");
      expect(alert.acknowledged_via).toBe("voice_call");
      expect(alert.escalation.next_step_at).toBeNull();
      expect(chainState.get(id)).toBe("stopped");
    }
    // Neither chain pages again: no email at the oil alert's 600 s step, no further call.
    r.clock.set(T0 + 3600_000);
    await r.tick();
    expect(r.voice.deliveries).toHaveLength(2);
    expect(r.email.deliveries).toHaveLength(0);
  });
});
