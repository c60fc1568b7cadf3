import {afterEach, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {Modem, type ModemOptions} from "../../src/modem/modem.js";
import {ModemSimulator, type Dialect, type SimulatorScript} from "../support/modem-simulator.js";

const NUMBER = "+4915112345678";
const started: {modem?: Modem; simulator?: ModemSimulator}[] = [];

afterEach(async () => {
  for (const item of started.splice(0)) {
    await item.modem?.stop();
    await item.simulator?.stop();
  }
});

// Short timeouts: the simulator answers within milliseconds.
async function setup(dialect: Dialect, script: Partial<SimulatorScript> = {}, options: Partial<ModemOptions> = {}) {
  const simulator = await ModemSimulator.start(dialect, script);
  const logLines: string[] = [];
  const modem = new Modem({
    path: simulator.devicePath,
    profile: dialect,
    clock: new ManualClock(Date.UTC(2026, 10, 22, 12)),
    logger: createLogger("debug", (line) => logLines.push(line)),
    lock: false,
    commandTimeoutMs: 300,
    callPollMs: 20,
    callEndGraceMs: 40,
    speechTimeoutMs: 1000,
    ringTimeoutMs: 2000,
    healthIntervalMs: 60_000,
    reconnectDelaysMs: [20, 50],
    ...options
  });
  started.push({modem, simulator});
  await modem.start();
  return {simulator, modem, logLines};
}

const SPEECH_COMMAND: Record<Dialect, string> = {sim800: "AT+CTTS=2,", sim7600: "AT+CTTS=2,", quectel: "AT+QWTTS=1,0,2,"};

describe.each(["sim800", "sim7600", "quectel"] as const)("Modem over a pty, %s dialect", (dialect) => {
  it("answers from call state, speaks the text, hears key 1 and hangs up", async () => {
    const {simulator, modem} = await setup(dialect, {call: {outcome: "answer", afterMs: 80, keys: ["1"]}});
    expect(modem.state).toBe("ready");
    const dialled = modem.dial(NUMBER);
    // The OK after ATD comes at once; the call is not answered until the simulator says so.
    await simulator.waitForCommand("ATD");
    expect(await dialled).toEqual({result: "answered"});
    await modem.speak("Disk full on db1. Press 1 to acknowledge.");
    expect(await simulator.waitForCommand(SPEECH_COMMAND[dialect])).toBe(`${SPEECH_COMMAND[dialect]}"Disk full on db1. Press 1 to acknowledge."`);
    expect(await modem.waitForKey(1000)).toEqual({kind: "key", key: "1"});
    await modem.hangUp();
    await simulator.waitForCommand(dialect === "sim800" ? "ATH" : "AT+CHUP");
    expect(await modem.waitForKey(10)).toEqual({kind: "ended", reason: "no_call"});
  });

  it("reports busy", async () => {
    const {modem} = await setup(dialect, {call: {outcome: "busy", afterMs: 60, keys: []}});
    expect(await modem.dial(NUMBER)).toEqual({result: "busy", reason: "busy"});
  });

  it("reports no answer, and the line is free for the next call", async () => {
    const {modem} = await setup(dialect, {call: {outcome: "no_answer", afterMs: 80, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("no_answer");
    expect((await modem.dial(NUMBER)).result).toBe("no_answer");
  });

  it("tolerates ERROR to every optional init command and reports what is missing", async () => {
    const optional = {sim800: ["AT+CLCC=1", "AT+DDET", "AT+CTTS=?", "AT+COLP"], sim7600: ["AT+CLCC=1", "AT+CDTAM", "AT+DDET", "AT+COLP"], quectel: ["AT+QWTTS=?", "AT+QTONEDET", "AT+COLP"]}[dialect];
    const {modem} = await setup(dialect, {failCommands: optional, call: {outcome: "answer", afterMs: 60, keys: []}});
    expect(modem.state).toBe("ready");
    expect(modem.health().capabilities).toEqual([]);
    // Without call-state URCs the modem polls +CLCC, so answering is still seen.
    expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
    await expect(modem.speak("hello")).rejects.toMatchObject({code: "tts_unsupported"});
    await modem.hangUp();
  });

  it("sends an SMS with the two-phase CMGS", async () => {
    const {simulator, modem} = await setup(dialect, {smsRef: 42});
    expect(await modem.sendSms(NUMBER, "Disk full on db1\x1a")).toEqual({messageRef: 42});
    expect(simulator.received.slice(-2)).toEqual([`AT+CMGS="${NUMBER}"`, "Disk full on db1"]);
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
      sim: "ready",
      registration: "roaming",
      operator: "Klaxon Net",
      signal: {rssi: 20, dbm: -73},
      capabilities: ["call_urcs", "tts"],
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
    const {simulator, modem} = await setup("quectel", {}, {commandTimeoutMs: 40, maxConsecutiveTimeouts: 2});
    simulator.script.silent = true;
    await modem.tick(); // AT and CSQ time out: the streak reaches 2, the port is re-opened
    expect(simulator.count("ATE0")).toBe(2);
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

describe("Modem unplugged", () => {
  it.each(["sim800", "sim7600", "quectel"] as const)("fails a ringing call and reconnects when the %s comes back", async (dialect) => {
    const {simulator, modem} = await setup(dialect, {call: {outcome: "answer", afterMs: 5000, keys: []}}, {ringTimeoutMs: 10_000});
    const dialled = modem.dial(NUMBER);
    await simulator.waitForCommand("ATD");
    await simulator.unplug();
    expect(await dialled).toEqual({result: "failed", reason: "modem_disconnected"});
    expect(modem.health()).toMatchObject({port_open: false, last_error: "modem disconnected"});
    await simulator.plug();
    await modem.waitForState("ready");
    expect(simulator.count("ATE0")).toBe(2);
    simulator.script.call = {outcome: "busy", afterMs: 30, keys: []};
    expect((await modem.dial(NUMBER)).result).toBe("busy");
  });

  it("ends an answered call with a reason when the modem disappears", async () => {
    const {simulator, modem} = await setup("sim7600", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    const key = modem.waitForKey(5000);
    await simulator.unplug();
    expect(await key).toEqual({kind: "ended", reason: "modem_disconnected"});
  });
});
