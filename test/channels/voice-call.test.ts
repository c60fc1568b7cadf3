import {afterEach, describe, expect, it} from "vitest";
import {startModemGateway, type Dialect, type ModemGatewayRig} from "../support/modem-simulator.js";

const PHONE = "+4915112345678";
const SPEECH: Record<Dialect, string> = {sim800: "AT+CTTS=2,", sim7600: "AT+CTTS=2,", quectel: "AT+QWTTS=1,0,2,"};
const HANG_UP: Record<Dialect, string> = {sim800: "ATH", sim7600: "AT+CHUP", quectel: "AT+CHUP"};

let rig: ModemGatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

function spoken(r: ModemGatewayRig): string[] {
  const prefix = SPEECH[r.simulator.dialect];
  return r.simulator.received
    .filter((command) => command.startsWith(prefix))
    .map((command) => command.slice(prefix.length + 1, -1));
}

describe.each(["sim800", "sim7600", "quectel"] as const)(
  "voice_call through a production gateway, %s dialect",
  (dialect) => {
    it("rings, speaks the alert and the prompt, commits key 1, then confirms and hangs up", async () => {
      rig = await startModemGateway(dialect, {call: {outcome: "answer", afterMs: 60, keys: ["1"]}});
      const r = rig;
      const maria = await r.recipient(["voice_call"], {phone: PHONE});
      // When the confirmation is being spoken, the acknowledgement must already be committed.
      const statusAtConfirmation = new Promise<string>((resolve) => {
        r.simulator.on("command", (command) => {
          if (command.includes("Acknowledged. Thank you"))
            resolve(
              r.gw.gateway.journal.read(
                (db) => (db.prepare("SELECT status FROM notifications").get() as {status: string}).status
              )
            );
        });
      });
      const id = await r.send(maria);
      expect(await r.simulator.waitForCommand("ATD")).toBe(`ATD${PHONE};`);
      const notification = await r.notification(id);
      expect(spoken(r)).toEqual([
        "Klaxon alert. Critical. From press-7. Oil temperature high. Press 1 to acknowledge, 2 to hear it again, 9 to pass it on.",
        "Acknowledged. Thank you. Goodbye."
      ]);
      expect(await statusAtConfirmation).toBe("acknowledged");
      const confirmation = r.simulator.received.findIndex((command) => command.includes("Acknowledged. Thank you"));
      expect(r.simulator.received.findIndex((command) => command === HANG_UP[dialect])).toBeGreaterThan(confirmation);
      expect(notification).toMatchObject({
        status: "acknowledged",
        acknowledged_via: "voice_call",
        acknowledged_by: `Alice (${PHONE})`
      });
      expect(notification.attempts).toMatchObject([
        {channel: "voice_call", outcome: "answered", detail: "acknowledged with key 1", target: "+49********678"}
      ]);
    });

    it("records busy and no answer as attempts", async () => {
      rig = await startModemGateway(dialect, {call: {outcome: "busy", afterMs: 40, keys: []}});
      const busy = await rig.notification(await rig.send(await rig.recipient(["voice_call"])));
      expect(busy.attempts).toMatchObject([{outcome: "busy", error: "the line was busy"}]);
      // Another person: an alert for Maria now would join her running chain instead of calling.
      rig.simulator.script.call = {outcome: "no_answer", afterMs: 40, keys: []};
      const unanswered = await rig.notification(
        await rig.send(await rig.recipient(["voice_call"], {name: "Jonas", phone: "+4917612345678"}))
      );
      expect(unanswered.attempts).toMatchObject([
        {outcome: "no_answer", error: expect.stringMatching(/^not answered/)}
      ]);
      expect(unanswered.status).toBe("notifying");
    });
  }
);

describe("voice_call: during the call", () => {
  it("hangs up a call in progress when the alert is acknowledged through the API", async () => {
    rig = await startModemGateway(
      "sim7600",
      {call: {outcome: "answer", afterMs: 40, keys: []}},
      {key_wait_seconds: 30}
    );
    const id = await rig.send(await rig.recipient(["voice_call"]));
    await rig.simulator.waitForCommand("AT+CTTS=2,");
    const ack = await rig.gw.call("POST", `/api/v1/notifications/${id}/ack`, {body: {by: "Maria at the console"}});
    expect(ack.status).toBe(200);
    await rig.simulator.waitForCommand("AT+CHUP");
    const notification = await rig.notification(id);
    expect(notification).toMatchObject({status: "acknowledged", acknowledged_via: "api"});
    expect(notification.attempts).toMatchObject([
      {outcome: "answered", detail: "hung up by Klaxon: acknowledged or resolved elsewhere"}
    ]);
    expect(spoken(rig)).toHaveLength(1);
  });

  it("repeats on key 2, and says so when no key comes", async () => {
    rig = await startModemGateway(
      "sim800",
      {call: {outcome: "answer", afterMs: 40, keys: ["2", ""]}},
      {speech_repeats: 2}
    );
    const notification = await rig.notification(await rig.send(await rig.recipient(["voice_call"])));
    expect(spoken(rig)).toHaveLength(2);
    expect(spoken(rig)[1]).toBe(spoken(rig)[0]);
    expect(notification.attempts).toMatchObject([
      {outcome: "answered", detail: "answered, no key pressed after 2 times"}
    ]);
    expect(notification.status).toBe("notifying");
  });

  it("passes the alert on with key 9: the next step calls at once instead of after the ack timeout", async () => {
    rig = await startModemGateway("quectel", {call: {outcome: "answer", afterMs: 40, keys: ["9"]}});
    const r = rig;
    const maria = await r.recipient(["voice_call"], {escalation: {ack_timeout_seconds: 3600, repeat: 1}});
    const id = await r.send(maria);
    await r.simulator.waitForCommand('AT+QWTTS=1,0,2,"Passing it on');
    r.simulator.script.call = {outcome: "answer", afterMs: 40, keys: ["1"]};
    while (r.simulator.count("ATD") < 2) await new Promise((resolve) => r.simulator.once("command", resolve));
    await r.simulator.waitForCommand('AT+QWTTS=1,0,2,"Acknowledged');
    const notification = await r.notification(id);
    expect(notification.attempts).toMatchObject([
      {outcome: "answered", detail: "key 9: passed on to the next step"},
      {outcome: "answered", detail: "acknowledged with key 1"}
    ]);
    expect(notification.status).toBe("acknowledged");
  });

  it("records the modem disappearing mid-call and shows the port closed on /readyz", async () => {
    rig = await startModemGateway("sim800", {call: {outcome: "answer", afterMs: 40, keys: []}}, {key_wait_seconds: 30});
    const id = await rig.send(await rig.recipient(["voice_call"]));
    await rig.simulator.waitForCommand("AT+CTTS=2,");
    await rig.simulator.unplug();
    const notification = await rig.notification(id);
    expect(notification.attempts).toMatchObject([
      {outcome: "answered", detail: "answered, then the modem was disconnected during the call"}
    ]);
    const ready = await rig.gw.call("GET", "/readyz");
    expect(ready.body.channels.find((channel: any) => channel.channel === "voice_call")).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^modem port .* is not open/)
    });
  });
});

describe("voice_call availability on /readyz", () => {
  it("shows the modem's live details without the PIN", async () => {
    rig = await startModemGateway(
      "sim7600",
      {sim: "pin", pin: "8642", operator: "Factory GSM", csq: 18},
      {pin: "8642"}
    );
    const ready = await rig.gw.call("GET", "/readyz");
    const voice = ready.body.channels.find((channel: any) => channel.channel === "voice_call");
    expect(voice).toMatchObject({
      available: true,
      reason: null,
      details: {
        state: "ready",
        port_open: true,
        sim: "ready",
        registration: "home",
        operator: "Factory GSM",
        signal: {rssi: 18, dbm: -77},
        last_call: null
      }
    });
    expect(JSON.stringify(ready.body) + rig.gw.logLines.join("\n")).not.toContain("8642");
  });

  it.each([
    [{sim: "absent" as const}, "no SIM card in the modem"],
    [{registration: 2}, "the modem is searching for a mobile network"],
    [{failCommands: ["AT+CTTS=?"]}, "the sim800 firmware has no text-to-speech for calls (the TTS setup was refused)"]
  ])("is unavailable with %j, and escalation skips it with the reason", async (script, reason) => {
    rig = await startModemGateway("sim800", script);
    const ready = await rig.gw.call("GET", "/readyz");
    expect(ready.body.channels.find((channel: any) => channel.channel === "voice_call")).toMatchObject({
      available: false,
      reason
    });
    const notification = await rig.notification(await rig.send(await rig.recipient(["voice_call"])));
    expect(notification.attempts).toMatchObject([{outcome: "skipped", error: reason}]);
    expect(rig.simulator.count("ATD")).toBe(0);
  });
});
