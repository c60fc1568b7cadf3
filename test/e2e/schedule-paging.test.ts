import {afterEach, describe, expect, it} from "vitest";
import {outcomes, startFaultRig, type FaultRig} from "../support/fault-rig.js";

// An alert sent to a schedule pages whoever is on call, by mail through a real SMTP server, and
// a hand-off during the escalation pages the person coming on shift from the next step.

let rig: FaultRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

const HOUR_MS = 3_600_000;

/** A one-member-per-hour rotation in UTC whose next hand-off is `handOffInMs` after the rig's now. */
async function hourlyRotation(r: FaultRig, members: string[], handOffInMs: number, fallback = members[0]) {
  const answer = await r.gw.call("POST", "/api/v1/schedules", {
    body: {
      name: "Press line",
      timezone: "UTC",
      layers: [
        {
          type: "rotation",
          members,
          shift_length_hours: 1,
          starts_at: new Date(r.clock.now() + handOffInMs - HOUR_MS).toISOString()
        }
      ],
      fallback
    }
  });
  expect(answer.status).toBe(201);
  return answer.body.uuid as string;
}

const mailedTo = (r: FaultRig) => r.smtp.messages.map((mail) => mail.envelope.to.join(","));

describe("paging a schedule", () => {
  it("mails the person on call, and after a hand-off mid-escalation the next one from the next step", async () => {
    rig = await startFaultRig();
    const r = rig;
    const maria = await r.recipient("Maria", ["email"]);
    const jonas = await r.recipient("Jonas", ["email"]);
    // Maria's hour ends 10 s from now, before her step's 15 s ack timeout is up.
    const schedule = await hourlyRotation(r, [maria, jonas], 10_000);

    const id = await r.send(schedule, "Hydraulic pressure low");
    let n = await r.notification(id);
    expect(outcomes(n)).toEqual([["email", "delivered"]]);
    expect(n.attempts[0].recipient_uuid).toBe(maria);
    expect(mailedTo(r)).toEqual([r.contacts("Maria").email]);

    n = await r.nextStep(id);
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([maria, jonas]);
    expect(mailedTo(r)).toEqual([r.contacts("Maria").email, r.contacts("Jonas").email]);
    const handOffs = await r.gw.call("GET", "/api/v1/audit?action=escalation.handed_off");
    expect(handOffs.body.items).toHaveLength(1);
    expect(handOffs.body.items[0]).toMatchObject({
      subject: {type: "notification", id},
      detail: {schedule, from: maria, to: jonas}
    });
    await r.expectNothingLost([id]);
  });

  it("keeps paging the same person while nobody hands off, and the chain ends with theirs", async () => {
    rig = await startFaultRig();
    const r = rig;
    const maria = await r.recipient("Maria", ["email"]);
    const jonas = await r.recipient("Jonas", ["email"]);
    const schedule = await hourlyRotation(r, [maria, jonas], 30 * 60_000);

    const id = await r.send(schedule, "Coolant level low");
    await r.notification(id);
    const n = await r.nextStep(id);
    expect(n.status).toBe("exhausted");
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([maria]);
    expect(mailedTo(r)).toEqual([r.contacts("Maria").email]);
  });

  it("pages the fallback in a gap, and /readyz warns about the gap without turning unready", async () => {
    rig = await startFaultRig();
    const r = rig;
    const maria = await r.recipient("Maria", ["email"]);
    const foreman = await r.recipient("Foreman", ["email"]);
    // The rotation's first shift starts in two hours: until then nobody is on call.
    const schedule = await hourlyRotation(r, [maria], 3 * HOUR_MS, foreman);

    const id = await r.send(schedule, "Conveyor stopped");
    const n = await r.notification(id);
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([foreman]);
    expect(mailedTo(r)).toEqual([r.contacts("Foreman").email]);

    // Without a key, /readyz counts the gap but names no schedule.
    const open = await r.gw.call("GET", "/readyz", {key: null});
    expect(open.body.counts.schedule_gaps).toBe(1);
    expect(JSON.stringify(open.body)).not.toMatch(/Press line|"schedule_gaps":\[/);
    const ready = await r.gw.call("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.schedule_gaps).toEqual([
      {
        uuid: schedule,
        name: "Press line",
        starts_at: new Date(r.clock.now()).toISOString(),
        ends_at: new Date(r.clock.now() + 2 * HOUR_MS).toISOString(),
        gaps: 1,
        fallback: foreman
      }
    ]);
  });
});
