import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";

// Who may command the box by SMS, end to end: a production gateway on a simulated modem (a real
// pty), incoming SMS delivered by the simulator as the network would, answers read off the modem.
// One gateway for the file; each test has its own recipient, so no test's phone throttles another's.

const SYNC_PHONE = "+4915199990000";

let rig: ModemGatewayRig;
beforeAll(async () => {
  rig = await startModemGateway("sim7600");
  await rig.recipient(["sms"], {name: "Sync", phone: SYNC_PHONE});
});
afterAll(async () => {
  if (process.env.DEBUG_LOG) console.log(rig.gw.logLines.filter((l) => /sms/.test(l)).join("\n"));
  await rig.stop();
});

/** Texts `body` from `phone` and returns the answer SMS. */
async function text(phone: string, body: string): Promise<string> {
  const answer = await rig.simulator.answerTo(phone, body);
  expect(answer.number).toBe(phone);
  return answer.text;
}

/**
 * Texts each of `bodies` from `phone`, which must get no answer: messages are handled in the
 * order they arrive, so once a known phone's HELP is answered, these were handled, silently.
 */
async function unanswered(phone: string, bodies: string[]): Promise<void> {
  const sent = rig.simulator.sent.length;
  for (const body of bodies) rig.simulator.receiveSms(phone, body);
  expect(await text(SYNC_PHONE, "HELP")).toMatch(/^Klaxon: STATUS lists/);
  expect(rig.simulator.sent.slice(sent).map((sms) => sms.number)).toEqual([SYNC_PHONE]);
}

/** Pages `phone`'s owner and returns the alert's id and the reply code its SMS carries. */
async function page(recipient: string, message: string): Promise<{id: string; code: string}> {
  const sent = rig.simulator.sent.length;
  const id = await rig.send(recipient, message);
  const sms = await rig.simulator.waitForSms(sent);
  return {id, code: /ACK (\d{4,8})/.exec(sms.text)![1]};
}

describe("SMS commands come from the right phone only", () => {
  it("a sender whose digits merely end a recipient's number gets nothing and acts for nobody", async () => {
    const maria = await rig.recipient(["sms"], {name: "Maria", phone: "+4915112345678"});
    const {id, code} = await page(maria, "Oil temperature high");
    await unanswered("12345678", ["STATUS", `ACK ${code}`, "ACK"]);
    expect(rig.gw.logLines.join("\n")).toMatch(
      /message from a number that is no recipient's; no answer.*"from":"12\*\*\*678"/
    );
    expect((await rig.notification(id)).status).not.toBe("acknowledged");
    // Her own phone, as a German network reports it (national form), still commands.
    expect(await text("015112345678", `ACK ${code}`)).toBe(`Klaxon: acknowledged ${code} (1 alert).`);
  });

  it("answers five wrong codes from one phone in ten minutes, then answers nothing and logs it", async () => {
    const phone = "+4915122223333";
    const petra = await rig.recipient(["sms"], {name: "Petra", phone});
    const {id, code} = await page(petra, "Door open");
    for (let wrong = 1; wrong <= 5; wrong++)
      expect(await text(phone, `ACK 900${wrong}`)).toBe(
        `Klaxon: code 900${wrong} is unknown or expired. Send STATUS for the current codes.`
      );
    // Blocked means blocked: the right code too does nothing while the phone is throttled.
    await unanswered(phone, ["ACK 9006", `ACK ${code}`]);
    expect(rig.gw.logLines.join("\n")).toMatch(
      /too many wrong codes or PINs from this phone in 10 minutes; ignored, no answer/
    );
    expect((await rig.notification(id)).status).not.toBe("acknowledged");
  });

  it("a recipient with a command PIN: commands without it do nothing, with it they act; the PIN is never shown", async () => {
    const phone = "+4915144445555";
    const jonas = await rig.recipient(["sms"], {name: "Jonas", phone, command_pin: "2468"});
    const shown = (await rig.gw.call("GET", `/api/v1/recipients/${jonas}`)).body;
    expect(shown.command_pin_set).toBe(true);
    expect(JSON.stringify(shown)).not.toMatch(/2468|command_pin_hash|scrypt/);
    expect(rig.gw.logLines.join("\n")).not.toContain("2468");

    const {id, code} = await page(jonas, "Press 9 light curtain fault");
    const pinReply = "Klaxon: PIN missing or wrong. End the command with your PIN, e.g. ACK 4821 <PIN>.";
    expect(await text(phone, `ACK ${code}`)).toBe(pinReply);
    expect(await text(phone, `ACK ${code} 1357`)).toBe(pinReply);
    expect(await text(phone, "STATUS")).toBe(pinReply);
    expect((await rig.notification(id)).status).not.toBe("acknowledged");
    expect(await text(phone, `ACK ${code} 2468`)).toBe(`Klaxon: acknowledged ${code} (1 alert).`);

    // A call in hears nothing before the PIN: a wrong one hangs up, the right one reads the alerts.
    const second = (await page(jonas, "Gate 2 open")).id;
    let from = rig.simulator.received.length;
    rig.simulator.incomingCall(phone, {keys: ["1111#", "1"]});
    await rig.simulator.waitForCommand("AT+CHUP", from);
    expect((await rig.notification(second)).status).not.toBe("acknowledged");
    from = rig.simulator.received.length;
    rig.simulator.incomingCall(phone, {keys: ["2468#", "1"]});
    await rig.simulator.waitForCommand("AT+CHUP", from);
    expect(await rig.notification(second)).toMatchObject({status: "acknowledged", acknowledged_via: "voice_call"});
  });
});
