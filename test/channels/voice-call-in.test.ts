import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";

// Calls to the modem (docs/modem.md, "Remote control"): a recipient calling from their phone
// hears their open alerts and acknowledges by key; anyone else is turned away unanswered. The
// production gateway on a simulated modem, on a real pty, in each dialect.

const MARIA = "+4915112345678";
const BOB = "+4915187654321";
const STRANGER = "+4917699999999";

const HANG_UP = {sim800: "ATH", sim7600: "AT+CHUP", quectel: "AT+CHUP"} as const;
const TTS_PROBE = {sim800: "AT+CTTS=?", sim7600: "AT+CDTAM=1", quectel: "AT+QWTTS=?"} as const;

let rig: ModemGatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

async function send(r: ModemGatewayRig, recipient: string, priority: string, message: string, source: string) {
  const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipient, message, priority, source}
  });
  expect(answer.status).toBe(202);
  return answer.body.notification_uuid as string;
}

/** What the modem was asked to say, from position `from` of the commands on, in order. */
function speech(r: ModemGatewayRig, from = 0): string[] {
  return r.simulator.received
    .slice(from)
    .filter((command) => /^AT\+(CTTS|QWTTS)=/.test(command) && !command.endsWith("=?"))
    .map((command) => /"([^"]*)"$/.exec(command)?.[1] ?? command);
}

/** Resolves once the simulated line is free again: the call came in, and has ended one way or another. */
async function callOver(r: ModemGatewayRig): Promise<void> {
  await eventually(
    "the call to end",
    () => Promise.resolve(r.simulator.incoming),
    (incoming) => incoming === null
  );
}

describe.each(["sim800", "sim7600", "quectel"] as const)("calls to the modem, %s dialect", (dialect) => {
  it("answers a recipient, speaks their open alerts one by one, key 1 acknowledges, 2 goes to the next", async () => {
    rig = await startModemGateway(dialect);
    const maria = await rig.recipient(["sms"], {name: "Maria", phone: MARIA});
    // The second more urgent than the first, so it pages at once rather than joining the first's chain.
    const oil = await send(rig, maria, "high", "Oil temperature high", "press-7");
    await rig.simulator.waitForSms(0);
    const door = await send(rig, maria, "critical", "Door open", "gate-2");
    await rig.simulator.waitForSms(1);

    const from = rig.simulator.received.length;
    // Key 1 after the first alert, nothing after "Acknowledged.", key 2 after the second alert.
    rig.simulator.incomingCall(MARIA, {keys: ["1", "", "2"]});
    await rig.simulator.waitForCommand(HANG_UP[dialect], from);
    await callOver(rig);

    expect(rig.simulator.count("ATA")).toBe(1);
    expect(speech(rig, from)).toEqual([
      "Klaxon. You have 2 open alerts. Alert 1 of 2. Critical. From gate-2. Door open. Press 1 to acknowledge, 2 for the next.",
      "Acknowledged.",
      "Alert 2 of 2. High priority. From press-7. Oil temperature high. Press 1 to acknowledge, 2 for the next.",
      "No more open alerts. Goodbye."
    ]);
    expect(await rig.notification(door)).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "voice_call",
      acknowledged_by: `Maria (${MARIA})`
    });
    expect((await rig.notification(oil)).status).toBe("notifying");
    const audit = (await rig.gw.call("GET", `/api/v1/audit?actor_id=${maria}`)).body.items;
    expect(audit.map((entry: any) => [entry.action, entry.subject.id, entry.actor])).toEqual([
      ["notification.acknowledged", door, {type: "recipient", id: maria, name: "Maria"}],
      ["remote_control.used", maria, {type: "recipient", id: maria, name: "Maria"}]
    ]);
    expect(audit[1].detail).toEqual({via: "voice_call", command: "call in"});
  });

  it("turns a stranger and a withheld number away without answering", async () => {
    rig = await startModemGateway(dialect);
    await rig.recipient(["sms"], {phone: MARIA});
    for (const caller of [STRANGER, null]) {
      const from = rig.simulator.received.length;
      rig.simulator.incomingCall(caller);
      await rig.simulator.waitForCommand(HANG_UP[dialect], from);
      await callOver(rig);
    }
    expect(rig.simulator.count("ATA")).toBe(0);
    expect(speech(rig)).toEqual([]);
    const logged = rig.gw.logLines.filter((line) => line.includes("no recipient's")).map((line) => JSON.parse(line));
    expect(logged.map((line) => [line.level, line.from])).toEqual([
      ["info", "+49********999"],
      ["info", "withheld"]
    ]);
  });

  it("where calls cannot be spoken to, turns the recipient away and texts them STATUS", async () => {
    rig = await startModemGateway(dialect, {failCommands: [TTS_PROBE[dialect]]});
    const maria = await rig.recipient(["sms"], {phone: MARIA});
    await send(rig, maria, "critical", "Door open", "gate-2");
    await rig.simulator.waitForSms(0);
    const from = rig.simulator.received.length;
    rig.simulator.incomingCall(MARIA);
    await rig.simulator.waitForCommand(HANG_UP[dialect], from);
    const status = await rig.simulator.waitForSms(1);
    expect(status.number).toBe(MARIA);
    expect(status.text).toMatch(/^Klaxon: 1 open\. \d{4} CRITICAL gate-2: Door open\.$/);
    expect(rig.simulator.count("ATA")).toBe(0);
  });
});

describe("a call to the modem and the paging line", () => {
  it("makes a page that comes due during the call wait for it, then dials; a caller hanging up frees the line", async () => {
    rig = await startModemGateway("sim7600", {call: {outcome: "answer", afterMs: 60, keys: ["1"]}});
    const maria = await rig.recipient(["sms"], {phone: MARIA});
    const bob = await rig.recipient(["voice_call"], {phone: BOB});
    await send(rig, maria, "critical", "Door open", "gate-2");
    await rig.simulator.waitForSms(0);

    // Maria listens without pressing a key; she hangs up after the second time she hears the alert.
    rig.simulator.incomingCall(MARIA, {keys: ["", ""], hangUpAfterKeys: true});
    await rig.simulator.waitForCommand("ATA");
    const page = await send(rig, bob, "critical", "Pump 2 stopped", "press-7");
    await callOver(rig);
    const dialled = await rig.simulator.waitForCommand("ATD");
    expect(dialled).toBe(`ATD${BOB};`);
    expect(rig.simulator.received.indexOf(dialled)).toBeGreaterThan(rig.simulator.received.indexOf("ATA"));
    expect(await rig.notification(page)).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "voice_call",
      attempts: [{channel: "voice_call", outcome: "answered"}]
    });
  });
});
