import {afterEach, describe, expect, it} from "vitest";
import {HELP_REPLY} from "../../src/channels/sms/sms-commands.js";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";

// The phone as a remote control by SMS (docs/modem.md, "Remote control"), through the production
// gateway and a simulated modem on a real pty in each dialect.

const PHONE = "+4915112345678";

let rig: ModemGatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

/** Texts the gateway from `sender` and resolves with its answer. */
async function text(r: ModemGatewayRig, sender: string, body: string): Promise<string> {
  const sent = r.simulator.sent.length;
  r.simulator.receiveSms(sender, body);
  const answer = await r.simulator.waitForSms(sent);
  expect(answer.number).toBe(sender);
  return answer.text;
}

// The journal keeps one copy of a message listed twice in a slot, and the simulator stamps every
// message with the same time: each probe is worded differently so it counts as a new message.
const PROBES = ["HELP", "help", "Help", "?", "HELP.", " help "];
let probes = 0;

/**
 * Texts the gateway from `sender`, then HELP from the known `probe` phone: messages are handled in
 * order, so when the next SMS out is the probe's answer, `sender` got none.
 */
async function expectNoAnswer(r: ModemGatewayRig, sender: string, body: string, probe = PHONE): Promise<void> {
  const sent = r.simulator.sent.length;
  r.simulator.receiveSms(sender, body);
  r.simulator.receiveSms(probe, PROBES[probes++ % PROBES.length]);
  expect(await r.simulator.waitForSms(sent)).toEqual({number: probe, text: HELP_REPLY, encoding: "gsm7"});
}

async function send(r: ModemGatewayRig, recipient: string, priority: string, message: string, source: string) {
  const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipient, message, priority, source}
  });
  expect(answer.status).toBe(202);
  return answer.body.notification_uuid as string;
}

async function audit(r: ModemGatewayRig, actorId: string): Promise<Array<{action: string; detail: any; actor: any}>> {
  return (await r.gw.call("GET", `/api/v1/audit?actor_id=${actorId}&limit=50`)).body.items;
}

describe.each(["sim800", "sim7600", "quectel"] as const)("SMS commands from a known phone, %s dialect", (dialect) => {
  it("answers STATUS with the open alerts and their codes, resolves by RES <code>, acknowledges the latest by ACK, answers HELP", async () => {
    rig = await startModemGateway(dialect);
    const maria = await rig.recipient(["sms"], {name: "Maria", phone: PHONE});
    // The second more urgent than the first, so it pages at once rather than joining the first's chain.
    const oil = await send(rig, maria, "high", "Oil temperature high", "press-7");
    await rig.simulator.waitForSms(0);
    const door = await send(rig, maria, "critical", "Door open", "gate-2");
    await rig.simulator.waitForSms(1);

    const status = await text(rig, "015112345678", " status ");
    const listed =
      /^Klaxon: 2 open\. (\d{4}) CRITICAL gate-2: Door open\. (\d{4}) HIGH press-7: Oil temperature high\.$/.exec(
        status ?? ""
      );
    expect(listed, status ?? "no answer").not.toBeNull();
    const [, doorCode, oilCode] = listed!;

    expect(await text(rig, PHONE, `res ${oilCode}`)).toBe(`Klaxon: resolved ${oilCode} (1 alert).`);
    expect((await rig.notification(oil)).status).toBe("resolved");

    expect(await text(rig, PHONE, "Ack")).toBe("Klaxon: acknowledged CRITICAL gate-2: Door open.");
    expect(await rig.notification(door)).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "sms",
      acknowledged_by: `Maria (${PHONE})`
    });
    expect(await text(rig, PHONE, `ACK ${doorCode}`)).toBe(`Klaxon: ${doorCode} was already closed.`);
    expect(await text(rig, PHONE, "HELP")).toBe(HELP_REPLY);
    expect(await text(rig, PHONE, "status")).toBe("Klaxon: no open alerts sent to you.");

    const entries = await audit(rig, maria);
    expect(entries.map((entry) => [entry.action, entry.detail.command ?? entry.detail.via ?? null]).reverse()).toEqual([
      ["remote_control.used", "STATUS"],
      ["notification.resolved", null],
      ["notification.acknowledged", "sms"],
      ["remote_control.used", "HELP"],
      ["remote_control.used", "STATUS"]
    ]);
    for (const entry of entries) expect(entry.actor).toMatchObject({type: "recipient", id: maria});
    expect(rig.simulator.storage.size).toBe(0);
  });
});

describe("SMS commands from other phones", () => {
  it("answers nothing to a number that is no recipient's, and acts on nothing it sends", async () => {
    rig = await startModemGateway("sim800");
    const maria = await rig.recipient(["sms"], {phone: PHONE});
    const id = await rig.send(maria);
    const alertSms = await rig.simulator.waitForSms(0);
    const code = /ACK (\d+)/.exec(alertSms.text)![1];
    for (const body of ["STATUS", "HELP", `ACK ${code}`, "ACK", "hello"])
      await expectNoAnswer(rig, "+4917699999999", body);
    expect((await rig.notification(id)).status).toBe("notifying");
    const logged = rig.gw.logLines.filter((line) => line.includes("no recipient's")).map((line) => JSON.parse(line));
    // Logged at info (repeats of one line are folded by the logger).
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) expect(line).toMatchObject({level: "info", from: "+49********999"});
  });

  it("answers a known phone's unknown text once with a pointer to HELP, then stays quiet for a while", async () => {
    rig = await startModemGateway("quectel");
    await rig.recipient(["sms"], {phone: PHONE});
    expect(await text(rig, PHONE, "on my way")).toBe("Klaxon did not understand that. Send HELP for the commands.");
    await expectNoAnswer(rig, PHONE, "I'm driving, I will answer later");
    expect(await text(rig, PHONE, "ACK 0000")).toBe(
      "Klaxon: code 0000 is unknown or expired. Send STATUS for the current codes."
    );
  });
});
