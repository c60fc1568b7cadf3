import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {mailedAlerts, outcomes, startFaultRig, type FaultRig, type FaultRigOptions} from "../support/fault-rig.js";

// The GSM modem fails while people are being paged (recipients: a call first, then email): the
// escalation must reach email by the step's ack timeout (at once when the modem is known to be
// unusable), /readyz must say what is wrong with the modem, nothing accepted may go missing, no
// call is repeated, and once the modem works again calls go out and every event is delivered once.

let rig: FaultRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

const dialled = (r: FaultRig) => r.modem!.received.filter((command) => command.startsWith("ATD"));

async function modemRig(modem: NonNullable<FaultRigOptions["modem"]>): Promise<FaultRig> {
  rig = await startFaultRig({modem});
  return rig;
}

/** The modem works again: a new alert for someone else rings, key 1 acknowledges it. */
async function expectCallsWorkAgain(r: FaultRig, name: string): Promise<string> {
  await eventually(
    "voice_call available again",
    () => r.channel("voice_call"),
    (state) => state.available,
    15_000
  );
  r.modem!.script.call = {outcome: "answer", afterMs: 40, keys: ["1"]};
  const id = await r.send(await r.recipient(name, ["voice_call", "email"]), "Press 7 running again");
  const n = await r.notification(id);
  expect(outcomes(n)).toEqual([["voice_call", "answered"]]);
  expect(n).toMatchObject({
    status: "acknowledged",
    acknowledged_via: "voice_call",
    acknowledged_by: `${name} (${r.contacts(name).phone})`
  });
  return id;
}

/** A modem unusable from the start: the call is skipped with the reason and email goes out in the same pass. */
async function expectSkippedToEmail(r: FaultRig, reason: string): Promise<string> {
  expect(await r.channel("voice_call")).toMatchObject({available: false, reason});
  const id = await r.send(await r.recipient("Maria", ["voice_call", "email"]), "Oil temperature high");
  const n = await r.notification(id);
  expect(outcomes(n)).toEqual([
    ["voice_call", "skipped"],
    ["email", "delivered"]
  ]);
  expect(n.attempts[0].error).toBe(reason);
  expect(n.attempts[1].started_at).toBe(n.attempts[0].started_at);
  expect(dialled(r)).toEqual([]);
  return id;
}

describe("modem faults during a call", () => {
  it("unplugged mid-call: records the cut call, reaches email by the ack timeout, skips calls while unplugged, and calls again once plugged back", async () => {
    const r = await modemRig({
      dialect: "sim800",
      script: {call: {outcome: "answer", afterMs: 40, keys: []}},
      settings: {key_wait_seconds: 30}
    });
    const maria = await r.recipient("Maria", ["voice_call", "email"]);
    const first = await r.send(maria, "Oil temperature high");
    await r.modem!.waitForCommand("AT+CTTS=2,");
    await r.modem!.unplug();

    let n = await r.notification(first);
    expect(n.attempts).toMatchObject([
      {channel: "voice_call", outcome: "answered", detail: "answered, then the modem was disconnected during the call"}
    ]);
    const voice = await r.channel("voice_call");
    expect(voice).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^modem port \S+ is not open/),
      details: {port_open: false, last_call: {outcome: "answered"}}
    });
    // Answered is not acknowledged: the chain goes on when the ack timeout is up.
    n = await r.nextStep(first);
    expect(outcomes(n)).toEqual([
      ["voice_call", "answered"],
      ["email", "delivered"]
    ]);

    const second = await r.send(await r.recipient("Jonas", ["voice_call", "email"]), "Press 7 stopped");
    n = await r.notification(second);
    expect(outcomes(n)).toEqual([
      ["voice_call", "skipped"],
      ["email", "delivered"]
    ]);
    expect(n.attempts[0].error).toMatch(/^modem port \S+ is not open/);

    await r.modem!.plug();
    const third = await expectCallsWorkAgain(r, "Ana");
    // Maria's interrupted call is not made again: one dial for her, one for Ana.
    expect(dialled(r)).toEqual([`ATD${r.contacts("Maria").phone};`, `ATD${r.contacts("Ana").phone};`]);
    expect(mailedAlerts(r)).toEqual([first, second]);
    await r.expectNothingLost([first, second, third]);
    await r.expectEveryEventDeliveredOnce();
  });

  it("answering ERROR to the dial: fails the attempt with the modem's answer, reaches email by the ack timeout, and calls once the modem dials again", async () => {
    const r = await modemRig({dialect: "sim7600", script: {failCommands: ["ATD"]}});
    const maria = await r.recipient("Maria", ["voice_call", "email"]);
    const first = await r.send(maria, "Oil temperature high");

    let n = await r.notification(first);
    expect(outcomes(n)).toEqual([["voice_call", "failed"]]);
    expect(n.attempts[0].error).toMatch(/^the call failed: /);
    const voice = await r.channel("voice_call");
    expect(voice.details).toMatchObject({
      last_call: {outcome: "failed", detail: n.attempts[0].error},
      last_error: expect.stringMatching(/ERROR/)
    });
    n = await r.nextStep(first);
    expect(outcomes(n)).toEqual([
      ["voice_call", "failed"],
      ["email", "delivered"]
    ]);

    r.modem!.script.failCommands = [];
    const second = await expectCallsWorkAgain(r, "Jonas");
    expect(mailedAlerts(r)).toEqual([first]);
    await r.expectNothingLost([first, second]);
    await r.expectEveryEventDeliveredOnce();
  });

  it("DTMF never arriving: the answered call acknowledges nothing, and the chain reaches email by the ack timeout", async () => {
    const r = await modemRig({dialect: "quectel", script: {call: {outcome: "answer", afterMs: 40, keys: []}}});
    const maria = await r.recipient("Maria", ["voice_call", "email"]);
    const id = await r.send(maria, "Oil temperature high");

    let n = await r.notification(id);
    expect(n.attempts).toMatchObject([
      {channel: "voice_call", outcome: "answered", detail: "answered, no key pressed after 2 times"}
    ]);
    expect(n.status).toBe("notifying");
    expect((await r.channel("voice_call")).details).toMatchObject({
      last_call: {outcome: "answered", detail: "answered, no key pressed after 2 times"}
    });
    n = await r.nextStep(id);
    expect(outcomes(n)).toEqual([
      ["voice_call", "answered"],
      ["email", "delivered"]
    ]);
    expect(dialled(r)).toHaveLength(1);
    expect(mailedAlerts(r)).toEqual([id]);
    await r.expectNothingLost([id]);
    await r.expectEveryEventDeliveredOnce();
  });
});

describe("modem unusable before the alert", () => {
  it("no SIM: skips the call for email at once, and calls once a SIM is in and the modem restarted", async () => {
    const r = await modemRig({dialect: "quectel", script: {sim: "absent"}});
    const first = await expectSkippedToEmail(r, "no SIM card in the modem");
    r.modem!.script.sim = "ready";
    await r.modem!.unplug();
    await r.modem!.plug();
    const second = await expectCallsWorkAgain(r, "Jonas");
    expect(mailedAlerts(r)).toEqual([first]);
    await r.expectNothingLost([first, second]);
    await r.expectEveryEventDeliveredOnce();
  });

  it(
    "no registration: skips the call for email at once, and calls once the health check sees the network again",
    {timeout: 40_000},
    async () => {
      const r = await modemRig({dialect: "sim800", script: {registration: 2}});
      const first = await expectSkippedToEmail(r, "the modem is searching for a mobile network");
      r.modem!.script.registration = 1;
      // Seen at the modem's next health pass (every 10 s), not before.
      const second = await expectCallsWorkAgain(r, "Jonas");
      expect(mailedAlerts(r)).toEqual([first]);
      await r.expectNothingLost([first, second]);
      await r.expectEveryEventDeliveredOnce();
    }
  );
});
