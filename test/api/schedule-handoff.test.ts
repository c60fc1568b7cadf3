import {describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {emailRig, stopEmailRigs} from "../channels/email-rig.js";
import {createPlant} from "../support/schedule-rig.js";

// Hand-off notices, opt-in per schedule: when a shift of the 3-shift plant (docs/schedules.md)
// begins, whoever it puts on call is mailed "You are on call for Line 3 until 14:00" through a
// real SMTP peer, once per shift, also across a restart; a schedule without the option mails nobody.
stopEmailRigs();

describe("hand-off notices", () => {
  it("tell whoever comes on shift, once, on the schedule's wall clock", async () => {
    // 05:59 in Berlin on the first day of the pattern: nobody is on call yet.
    const clock = new ManualClock(Date.parse("2026-03-27T04:59:00Z"));
    const rig = await emailRig({gateway: {clock}});
    const {gw, peer} = rig;
    const {anna, dora, crewD, schedule} = await createPlant(gw);
    expect(schedule.handoff_notice).toBe(false);
    const tick = () => gw.gateway.services.handoffNotices.tick();
    await tick();

    const patched = await gw.call("PATCH", `/api/v1/schedules/${schedule.uuid}`, {body: {handoff_notice: true}});
    expect(patched.body.handoff_notice).toBe(true);
    await tick();
    expect(peer.messages).toHaveLength(0);

    // 06:00 Berlin: crew A (Anna) takes the early shift until 14:00.
    clock.set(Date.parse("2026-03-27T05:00:00Z"));
    await tick();
    const early = await peer.next();
    expect(early.envelope.to).toEqual(["anna@plant.lan"]);
    expect(early.subject).toContain("You are on call for Line 3 until 14:00");
    expect(early.text).not.toContain("/ack/");

    clock.advance(3_600_000);
    await tick();
    await gw.restart();
    await gw.gateway.services.handoffNotices.tick();
    expect(peer.messages).toHaveLength(1);

    // 14:00 Berlin: crew D, a group, takes the late shift until 22:00; both members hear it.
    clock.set(Date.parse("2026-03-27T13:00:00Z"));
    await gw.gateway.services.handoffNotices.tick();
    const late = [await peer.next(), await peer.next()].map((mail) => mail.envelope.to[0]).sort();
    expect(late).toEqual(["anna@plant.lan", "dora@plant.lan"]);
    expect(peer.messages.at(-1)?.subject).toContain("until 22:00");

    const notices = await gw.call("GET", `/api/v1/audit?action=schedule.handoff_notice&subject_id=${schedule.uuid}`);
    expect(notices.body.items).toHaveLength(2);
    expect(notices.body.items[0].detail).toMatchObject({
      shift: `2026-03-27T13:00:00.000Z ${crewD}`,
      until: "2026-03-27T21:00:00.000Z",
      text: "You are on call for Line 3 until 22:00"
    });
    expect(notices.body.items[0].detail.results).toEqual(
      expect.arrayContaining([
        {recipient: anna, channel: "email", outcome: "delivered", detail: expect.any(String)},
        {recipient: dora, channel: "email", outcome: "delivered", detail: expect.any(String)}
      ])
    );
  });

  it("name the day when the shift ends on a later one, and stay off when not asked for", async () => {
    const clock = new ManualClock(Date.parse("2026-03-27T21:00:00Z"));
    const rig = await emailRig({gateway: {clock}});
    const {gw, peer} = rig;
    const quiet = await createPlant(gw);
    await gw.gateway.services.handoffNotices.tick();
    expect(peer.messages).toHaveLength(0);

    // 22:00 Berlin on a Friday: the night shift runs to Saturday 06:00.
    await gw.call("PATCH", `/api/v1/schedules/${quiet.schedule.uuid}`, {body: {handoff_notice: true}});
    await gw.gateway.services.handoffNotices.tick();
    expect((await peer.next()).subject).toContain("You are on call for Line 3 until Sat 28 Mar 06:00");
  });
});
