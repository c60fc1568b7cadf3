import {afterEach, describe, expect, it} from "vitest";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";

// The phone as a remote control, end to end through the production gateway with no internet in
// the picture: alerts go out by SMS on a simulated modem (a real pty), the recipient's phone texts
// STATUS and ACK, then calls the modem and presses 1. What changed is read back over HTTP.

const PHONE = "+4915112345678";

let rig: ModemGatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

async function text(r: ModemGatewayRig, body: string): Promise<string> {
  const answer = await r.simulator.answerTo(PHONE, body);
  expect(answer.number).toBe(PHONE);
  return answer.text;
}

describe("the phone as a remote control, end to end", () => {
  it("STATUS lists the alert, ACK acknowledges it, and a call in with key 1 acknowledges the next one", async () => {
    rig = await startModemGateway("sim7600");
    const maria = await rig.recipient(["sms"], {name: "Maria", phone: PHONE});
    const first = await rig.send(maria, "Oil temperature high", "press-7");
    expect((await rig.simulator.waitForSms(0)).text).toMatch(/^Klaxon CRITICAL from press-7: Oil temperature high\./);

    expect(await text(rig, "STATUS")).toMatch(/^Klaxon: 1 open\. \d{4} CRITICAL press-7: Oil temperature high\.$/);
    expect(await text(rig, "ACK")).toBe("Klaxon: acknowledged CRITICAL press-7: Oil temperature high.");
    const acknowledged = (await rig.gw.call("GET", `/api/v1/notifications/${first}`)).body;
    expect(acknowledged).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "sms",
      acknowledged_by: `Maria (${PHONE})`
    });

    const second = await rig.send(maria, "Door open", "gate-2");
    await rig.simulator.waitForSms(3);
    const from = rig.simulator.received.length;
    rig.simulator.incomingCall(PHONE, {keys: ["1"]});
    await rig.simulator.waitForCommand("AT+CHUP", from);
    await rig.gw.gateway.services.runner.idle();
    const byCall = (await rig.gw.call("GET", `/api/v1/notifications/${second}`)).body;
    expect(byCall).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "voice_call",
      acknowledged_by: `Maria (${PHONE})`
    });

    const audit = (await rig.gw.call("GET", `/api/v1/audit?actor_id=${maria}`)).body.items;
    expect(audit.map((entry: any) => [entry.action, entry.subject.id, entry.detail.command ?? null]).reverse()).toEqual(
      [
        ["remote_control.used", maria, "STATUS"],
        ["notification.acknowledged", first, null],
        ["remote_control.used", maria, "call in"],
        ["notification.acknowledged", second, null]
      ]
    );
    for (const entry of audit) expect(entry.actor).toMatchObject({type: "recipient", id: maria});
  });
});
