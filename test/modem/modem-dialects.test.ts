import {describe, expect, it} from "vitest";
import type {Dialect} from "../support/modem-simulator.js";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

const DELIVERED = {outcome: "delivered", detail: "the network reports the SMS received by the phone (TP-Status 0)"};

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
    const common = ["AT+CMGF=0", 'AT+CSCS="IRA"', "AT+CPMS", "AT+CNMI", "AT+CSMS", "AT+CLIP"];
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

  it("sends an SMS in PDU mode, é and € as GSM-7, asking for a status report, and hears the network report it delivered", async () => {
    const {simulator, modem} = await setup(dialect, {smsRef: 42});
    const [{messageRef, report}] = await modem.sendSms(NUMBER, "Disk full on db1: 5 € café\x1a");
    expect(messageRef).toBe(42);
    expect(modem.health().capabilities).toContain("sms_pdu");
    expect(simulator.received.at(-2)).toMatch(/^AT\+CMGS=\d+$/);
    expect(simulator.sms.submitted).toEqual([
      {number: NUMBER, text: "Disk full on db1: 5 € café", encoding: "gsm7", statusReportRequested: true, part: null}
    ]);
    expect(simulator.count("AT+CSMP")).toBe(0);
    expect(await report).toEqual(DELIVERED);
  });

  it("falls back to text mode where AT+CMGF=0 is refused: CSMP, GSM-7 through IRA, UCS-2 hex, one SMS at most", async () => {
    const {simulator, modem} = await setup(dialect, {smsRef: 42, failCommands: ["AT+CMGF=0"]});
    const [{messageRef, report}] = await modem.sendSms(NUMBER, "Disk full on db1\x1a");
    expect(messageRef).toBe(42);
    // First octet 49: SMS-SUBMIT with TP-SRR, the status report requested.
    expect(simulator.received.slice(-3)).toEqual(["AT+CSMP=49,167,0,0", `AT+CMGS="${NUMBER}"`, "Disk full on db1"]);
    expect(await report).toEqual(DELIVERED);
    await modem.sendSms(NUMBER, "Öl über 80 °C ✓");
    expect(simulator.sent).toEqual([
      {number: NUMBER, text: "Disk full on db1", encoding: "gsm7"},
      {number: NUMBER, text: "Öl über 80 °C ✓", encoding: "ucs2"}
    ]);
    expect(simulator.received.at(-1)).toBe('AT+CSCS="IRA"');
    await expect(modem.sendSms(NUMBER, "é".repeat(71))).rejects.toMatchObject({code: "sms_too_long"});
    expect(simulator.count("AT+CMGS")).toBe(2);
  });

  it("sends with the modem's own defaults, and without a report, where AT+CSMP is refused", async () => {
    const {simulator, modem} = await setup(dialect, {failCommands: ["AT+CMGF=0", "AT+CSMP"]});
    expect(await modem.sendSms(NUMBER, "Öl über 80 °C")).toEqual([{messageRef: 37, report: null}]);
    // No DCS could be set, so no UCS-2 hex: the text goes as plain ASCII, accents dropped.
    expect(simulator.sent).toEqual([{number: NUMBER, text: "Ol uber 80 ?C", encoding: "gsm7"}]);
    expect(simulator.count('AT+CSCS="UCS2"')).toBe(0);
  });

  it("announces an arriving SMS, reads its PDU, deletes it, and reads the empty slot (+CMS ERROR: 321) as empty", async () => {
    const {simulator, modem} = await setup(dialect);
    const announced = new Promise<number>((resolve) => modem.once("sms", resolve));
    const index = simulator.receiveSms("+4915112345678", "NO CARRIER\nACK 4821");
    expect(await announced).toBe(index);
    expect(await modem.readMessage(index)).toMatchObject({
      index,
      form: "pdu",
      problem: null,
      content: {
        kind: "deliver",
        sender: "+4915112345678",
        text: "NO CARRIER\nACK 4821",
        sentAt: "2026-11-22T09:00:00.000Z"
      }
    });
    await modem.deleteMessage(index);
    expect(simulator.storage.size).toBe(0);
    expect(await modem.readMessage(index)).toBeNull();
    expect(modem.health().last_error).toBeNull();
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
