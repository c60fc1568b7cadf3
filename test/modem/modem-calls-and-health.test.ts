import {describe, expect, it} from "vitest";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

describe("Modem calls: edge cases", () => {
  it.each(["sim800", "sim7600", "quectel"] as const)(
    "%s: a call answered just as the ring timeout fires is hung up cleanly and reported",
    async (dialect) => {
      const {simulator, modem} = await setup(
        dialect,
        {call: {outcome: "late_answer", afterMs: 0, keys: []}},
        {ringTimeoutMs: 150}
      );
      expect(await modem.dial(NUMBER)).toEqual({result: "no_answer", reason: "answered_after_ring_timeout"});
      expect(simulator.count(dialect === "sim800" ? "ATH" : "AT+CHUP")).toBe(1);
      expect(modem.lineBusy).toBe(false);
      // The stale call-state lines of that call cannot leak into the next one.
      simulator.script.call = {outcome: "answer", afterMs: 40, keys: []};
      expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
      await modem.hangUp();
    }
  );

  it("hangs up a ringing call when asked to, and the dial reports why", async () => {
    const {simulator, modem} = await setup("sim800", {call: {outcome: "answer", afterMs: 5000, keys: []}});
    const dialled = modem.dial(NUMBER);
    await simulator.waitForCommand("ATD");
    await modem.hangUp();
    expect(await dialled).toEqual({result: "failed", reason: "local_hangup"});
    expect(simulator.count("ATH")).toBe(1);
  });

  it("follows Quectel call state through ^DSCI when +CLCC polling is off", async () => {
    const {simulator, modem} = await setup(
      "quectel",
      {call: {outcome: "answer", afterMs: 40, keys: []}},
      {callPollMs: 60_000}
    );
    expect(modem.health().capabilities).toContain("call_urcs");
    expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
    expect(simulator.count("AT+CLCC")).toBe(0);
    await modem.hangUp();
  });

  it("speaks a text longer than one TTS command in pieces", async () => {
    const {simulator, modem} = await setup("quectel", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    const sentence = "Oil temperature on press seven is above eighty degrees. ";
    await modem.speak(sentence.repeat(20));
    const pieces = simulator.received.filter((command) => command.startsWith("AT+QWTTS=1,0,2,"));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((command) => command.slice('AT+QWTTS=1,0,2,"'.length, -1)).join(" ")).toBe(
      sentence.repeat(20).trim()
    );
    await modem.hangUp();
  });
});

describe("Modem Quectel specifics", () => {
  it("routes URCs to the configured port and waits for SMS initialisation after READY", async () => {
    const {simulator, modem} = await setup("quectel", {simInitStatus: 1}, {urcPort: "uart1"});
    expect(simulator.count('AT+QURCCFG="urcport","uart1"')).toBe(1);
    expect(modem.health().sim).toBe("initialising");
    simulator.script.simInitStatus = 3;
    await modem.tick();
    expect(modem.health().sim).toBe("ready");
  });
});

describe("Modem SIM, network and health", () => {
  it("fills health from CSQ, CREG/CEREG, COPS and CPIN", async () => {
    const {modem} = await setup("sim7600", {csq: 20, registration: 5});
    await modem.tick();
    expect(modem.health()).toEqual({
      profile: "sim7600",
      state: "ready",
      port_open: true,
      device: expect.stringMatching(/^\/dev\/pts\/\d+$/),
      port_held_by: [],
      sim: "ready",
      registration: "roaming",
      operator: "Klaxon Net",
      signal: {rssi: 20, dbm: -73},
      capabilities: ["call_urcs", "caller_id", "sms_notifications", "sms_pdu", "sms_status_reports", "tts"],
      consecutive_timeouts: 0,
      last_error: null,
      checked_at: "2026-11-22T12:00:00.000Z"
    });
  });

  it("reports no network in health, and a dial fails", async () => {
    const {modem} = await setup("sim800", {registration: 3});
    await modem.tick();
    expect(modem.health()).toMatchObject({registration: "denied", operator: null});
    expect((await modem.dial(NUMBER)).result).not.toBe("answered");
  });

  it("reports a missing SIM", async () => {
    const {modem} = await setup("quectel", {sim: "absent"});
    expect(modem.health().sim).toBe("not_inserted");
  });

  it("enters the PIN once and keeps it out of logs and health", async () => {
    const {simulator, modem, logLines} = await setup("sim800", {sim: "pin", pin: "8642"}, {pin: "8642"});
    expect(modem.health().sim).toBe("ready");
    expect(simulator.count("AT+CPIN=")).toBe(1);
    expect(logLines.join("\n") + JSON.stringify(modem.health())).not.toContain("8642");
  });

  it("never retries a PIN the SIM rejected, not even after a re-plug", async () => {
    const {simulator, modem, logLines} = await setup("sim800", {sim: "pin", pin: "1111"}, {pin: "2222"});
    expect(modem.health().sim).toBe("sim_pin_rejected");
    await modem.tick();
    await simulator.unplug();
    await modem.waitForState("reconnecting");
    await simulator.plug();
    await modem.waitForState("ready");
    await modem.tick();
    expect(simulator.count("AT+CPIN=")).toBe(1);
    expect(modem.health().sim).toBe("sim_pin_rejected");
    expect(logLines.join("\n") + JSON.stringify(modem.health())).not.toContain("2222");
  });

  it("re-opens after consecutive timeouts, then resets with AT+CFUN=1,1", async () => {
    const {simulator, modem, logLines} = await setup("quectel", {}, {commandTimeoutMs: 250, maxConsecutiveTimeouts: 2});
    simulator.script.silent = true;
    await modem.tick(); // AT and CSQ time out: the streak reaches 2, the port is re-opened
    expect(logLines.filter((line) => line.includes("re-opening the port"))).toHaveLength(1);
    await modem.tick(); // init times out again after the re-open: reset the module
    await modem.tick();
    expect(simulator.count("AT+CFUN=1,1")).toBe(1);
    expect(modem.state).toBe("unresponsive");
    simulator.script.silent = false;
    await modem.tick(); // it answers again: init is re-applied and the modem is ready
    expect(modem.state).toBe("ready");
    expect(modem.health().consecutive_timeouts).toBe(0);
  });
});
