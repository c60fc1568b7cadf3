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

const SPEECH_COMMAND: Record<Dialect, string> = {
  sim800: "AT+CTTS=2,",
  sim7600: "AT+CTTS=2,",
  quectel: "AT+QWTTS=1,0,2,"
};

describe.each(["sim800", "sim7600", "quectel"] as const)("Modem over a pty, %s dialect", (dialect) => {
  it("answers from call state, speaks the text, hears key 1 and hangs up", async () => {
    const {simulator, modem} = await setup(dialect, {call: {outcome: "answer", afterMs: 80, keys: ["1"]}});
    expect(modem.state).toBe("ready");
    const dialled = modem.dial(NUMBER);
    // The OK after ATD comes at once; the call is not answered until the simulator says so.
    await simulator.waitForCommand("ATD");
    expect(await dialled).toEqual({result: "answered"});
    await modem.speak("Disk full on db1. Press 1 to acknowledge.");
    expect(await simulator.waitForCommand(SPEECH_COMMAND[dialect])).toBe(
      `${SPEECH_COMMAND[dialect]}"Disk full on db1. Press 1 to acknowledge."`
    );
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
    const common = ['AT+CSCS="IRA"', "AT+CPMS", "AT+CNMI", "AT+CSMS"];
    const optional = {
      sim800: ["AT+CLCC=1", "AT+DDET", "AT+CTTS=?", "AT+COLP"],
      sim7600: ["AT+CLCC=1", "AT+CDTAM", "AT+DDET", "AT+COLP"],
      quectel: ["AT+QWTTS=?", "AT+QTONEDET", "AT+COLP", "AT^DSCI", "AT+QINISTAT"]
    }[dialect];
    const {modem} = await setup(dialect, {
      failCommands: [...common, ...optional],
      call: {outcome: "answer", afterMs: 60, keys: []}
    });
    expect(modem.state).toBe("ready");
    expect(modem.health().capabilities).toEqual([]);
    expect(modem.health().sim).toBe("ready");
    // Without call-state URCs the modem polls +CLCC, so answering is still seen.
    expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
    await expect(modem.speak("hello")).rejects.toMatchObject({code: "tts_unsupported"});
    await modem.hangUp();
  });

  it("sends an SMS with the two-phase CMGS, plain text as GSM-7, and hears the network report it delivered", async () => {
    const {simulator, modem} = await setup(dialect, {smsRef: 42});
    const {messageRef, report} = await modem.sendSms(NUMBER, "Disk full on db1\x1a");
    expect(messageRef).toBe(42);
    // First octet 49: SMS-SUBMIT with TP-SRR, the status report requested.
    expect(simulator.received.slice(-3)).toEqual(["AT+CSMP=49,167,0,0", `AT+CMGS="${NUMBER}"`, "Disk full on db1"]);
    expect(simulator.sent).toEqual([{number: NUMBER, text: "Disk full on db1", encoding: "gsm7"}]);
    expect(await report).toEqual({
      outcome: "delivered",
      detail: "the network reports the SMS received by the phone (TP-Status 0)"
    });
  });

  it("sends text outside GSM-7 as UCS-2 hex, number included, and puts the charset back", async () => {
    const {simulator, modem} = await setup(dialect);
    await modem.sendSms(NUMBER, "Öl über 80 °C ✓");
    expect(simulator.sent).toEqual([{number: NUMBER, text: "Öl über 80 °C ✓", encoding: "ucs2"}]);
    expect(simulator.received.at(-1)).toBe('AT+CSCS="IRA"');
  });

  it("refuses a text longer than one SMS instead of letting the modem cut it", async () => {
    const {simulator, modem} = await setup(dialect);
    await expect(modem.sendSms(NUMBER, "é".repeat(71))).rejects.toMatchObject({code: "sms_too_long"});
    expect(simulator.count("AT+CMGS")).toBe(0);
  });

  it("announces an arriving SMS, reads it in UCS-2 whatever it says, and deletes it", async () => {
    const {simulator, modem} = await setup(dialect);
    const announced = new Promise<number>((resolve) => modem.once("sms", resolve));
    const index = simulator.receiveSms("+4915112345678", "NO CARRIER\nACK 4821");
    expect(await announced).toBe(index);
    expect(await modem.readMessage(index)).toEqual({index, sender: "+4915112345678", text: "NO CARRIER\nACK 4821"});
    await modem.deleteMessage(index);
    expect(simulator.storage.size).toBe(0);
    expect(await modem.readMessage(index)).toBeNull();
  });
});

describe("Modem SMS storage and the shared line", () => {
  it("lists every stored message, empty ones included, with the charset back to IRA", async () => {
    const {simulator, modem} = await setup("sim800");
    simulator.receiveSms("015112345678", "1 4821", {announce: false});
    simulator.receiveSms("+4917000000000", "", {announce: false});
    simulator.receiveSms("+4917000000001", '+CMTI: "SM",9', {announce: false});
    expect(await modem.listMessages()).toEqual([
      {index: 1, sender: "015112345678", text: "1 4821"},
      {index: 2, sender: "+4917000000000", text: ""},
      {index: 3, sender: "+4917000000001", text: '+CMTI: "SM",9'}
    ]);
    expect(simulator.received.at(-1)).toBe('AT+CSCS="IRA"');
  });

  it("falls back to a UCS-2 status for firmware that wants every string in the charset", async () => {
    const {simulator, modem} = await setup("quectel", {hexStringParameters: true});
    simulator.receiveSms("+4915112345678", "ACK 1", {announce: false});
    expect(await modem.listMessages()).toEqual([{index: 1, sender: "+4915112345678", text: "ACK 1"}]);
    expect(simulator.count('AT+CMGL="0041004C004C"')).toBe(1);
  });

  it("lets an SMS wait until the call in progress has ended, so the two never interleave", async () => {
    const {simulator, modem} = await setup("sim7600", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    let smsDone = false;
    const sms = modem.sendSms(NUMBER, "queued behind the call").then(() => (smsDone = true));
    await modem.speak("Still talking.");
    expect(smsDone).toBe(false);
    expect(simulator.count("AT+CMGS")).toBe(0);
    await modem.hangUp();
    await sms;
    const order = simulator.received.filter((command) => /^(AT\+CHUP|AT\+CMGS|AT\+CTTS=2)/.test(command));
    expect(order).toEqual(['AT+CTTS=2,"Still talking."', "AT+CHUP", `AT+CMGS="${NUMBER}"`]);
  });

  it("gives up waiting for the line when the caller aborts", async () => {
    const {modem} = await setup("sim800", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    const controller = new AbortController();
    const sms = modem.sendSms(NUMBER, "never sent", controller.signal);
    controller.abort(new Error("acknowledged elsewhere"));
    await expect(sms).rejects.toThrow("acknowledged elsewhere");
    await modem.hangUp();
    expect((await modem.sendSms(NUMBER, "the line is free again")).messageRef).toBe(37);
  });
});

const DELIVERED = {outcome: "delivered", detail: "the network reports the SMS received by the phone (TP-Status 0)"};

describe("Modem SMS status reports", () => {
  it("reports a permanent failure in words, and keeps waiting through a temporary error", async () => {
    const {simulator, modem} = await setup("sim7600", {
      statusReport: {outcome: "failed", afterMs: 10, interleave: false}
    });
    const failed = await modem.sendSms(NUMBER, "first");
    expect(await failed.report).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: incompatible destination (TP-Status 65)"
    });
    simulator.script.statusReport = {outcome: "temporary_then_delivered", afterMs: 40, interleave: false};
    const temporary = new Promise<void>((resolve) =>
      modem.on("urc", (line) => line.startsWith("+CDS:") && line.endsWith(",33") && resolve())
    );
    const later = await modem.sendSms(NUMBER, "second");
    let settled = false;
    void later.report!.then(() => (settled = true));
    await temporary;
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(await later.report).toEqual(DELIVERED);
  });

  it("ends the wait with null when no report comes within the limit", async () => {
    const {modem} = await setup(
      "sim800",
      {statusReport: {outcome: "never", afterMs: 0, interleave: false}},
      {smsReportTimeoutMs: 80}
    );
    const started = Date.now();
    expect(await (await modem.sendSms(NUMBER, "into the void")).report).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
  });

  it("ignores a report for a reference it is not waiting for", async () => {
    const {simulator, modem} = await setup("quectel", {
      smsRef: 12,
      statusReport: {outcome: "never", afterMs: 0, interleave: false}
    });
    const {report} = await modem.sendSms(NUMBER, "waiting");
    simulator.reportStatus(99, 0);
    simulator.reportStatus(12, 0x46, {number: NUMBER});
    expect(await report).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: validity period expired (TP-Status 70)"
    });
  });

  it("matches a report that comes inside the answer to the next command, which still succeeds", async () => {
    const {modem} = await setup("sim7600", {statusReport: {outcome: "delivered", afterMs: 0, interleave: true}});
    const {report} = await modem.sendSms(NUMBER, "interleaved");
    // Held by the simulator until a command is answered: the health pass sends AT first.
    await modem.tick();
    expect(await report).toEqual(DELIVERED);
    expect(modem.health()).toMatchObject({
      signal: {rssi: 20},
      registration: "home",
      last_error: null,
      consecutive_timeouts: 0
    });
  });

  it("sends without a status report when the modem refuses CNMI <ds>=1, and still hears arriving SMS", async () => {
    const {simulator, modem} = await setup("sim800", {failCommands: ["AT+CNMI=2,1,0,1"]});
    expect(modem.health().capabilities).toContain("sms_notifications");
    expect(modem.health().capabilities).not.toContain("sms_status_reports");
    expect(await modem.sendSms(NUMBER, "no report")).toEqual({messageRef: 37, report: null});
    expect(simulator.count("AT+CSMP=17,")).toBe(1);
    const announced = new Promise<number>((resolve) => modem.once("sms", resolve));
    const index = simulator.receiveSms(NUMBER, "hi");
    expect(await announced).toBe(index);
  });

  it("ends every wait with null when it stops", async () => {
    const {modem} = await setup("sim800", {statusReport: {outcome: "never", afterMs: 0, interleave: false}});
    const {report} = await modem.sendSms(NUMBER, "pending at stop");
    await modem.stop();
    expect(await report).toBeNull();
  });
});

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
      sim: "ready",
      registration: "roaming",
      operator: "Klaxon Net",
      signal: {rssi: 20, dbm: -73},
      capabilities: ["call_urcs", "sms_notifications", "sms_status_reports", "tts"],
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
    const {simulator, modem} = await setup("quectel", {}, {commandTimeoutMs: 250, maxConsecutiveTimeouts: 2});
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
  it.each(["sim800", "sim7600", "quectel"] as const)(
    "fails a ringing call and reconnects when the %s comes back",
    async (dialect) => {
      const {simulator, modem} = await setup(
        dialect,
        {call: {outcome: "answer", afterMs: 5000, keys: []}},
        {ringTimeoutMs: 10_000}
      );
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
    }
  );

  it("ends an answered call with a reason when the modem disappears", async () => {
    const {simulator, modem} = await setup("sim7600", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    const key = modem.waitForKey(5000);
    await simulator.unplug();
    expect(await key).toEqual({kind: "ended", reason: "modem_disconnected"});
  });
});
