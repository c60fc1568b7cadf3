import {describe, expect, it} from "vitest";
import {modemUnavailableReason} from "../../src/modem/availability.js";
import type {Dialect} from "../support/modem-simulator.js";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

// The command that turns on call-state URCs; refused, the modem polls +CLCC for call state.
const CALL_URC_SETUP: Record<Dialect, string> = {sim800: "AT+CLCC=1", sim7600: "AT+CLCC=1", quectel: "AT^DSCI"};

const refusalLines = (logLines: string[], command: string) =>
  logLines.filter((line) => line.includes("refused an optional command") && line.includes(JSON.stringify(command)));

describe.each(["sim800", "sim7600", "quectel"] as const)("A tolerant AT dialogue, %s dialect", (dialect) => {
  it("starts with AT+CMEE=1 refused, logs the refusal once at debug, and calls as usual", async () => {
    const {simulator, modem, logLines} = await setup(dialect, {failCommands: ["AT+CMEE"]});
    expect(modem.state).toBe("ready");
    expect(modem.health()).toMatchObject({sim: "ready", registration: "home", last_error: null});
    expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
    await modem.hangUp();
    // A re-open runs the init sequence again; the refusal is not logged again.
    await simulator.unplug();
    await modem.waitForState("reconnecting");
    await simulator.plug();
    await modem.waitForState("ready");
    expect(simulator.count("AT+CMEE=1")).toBe(2);
    const lines = refusalLines(logLines, "AT+CMEE=1");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"level":"debug"');
  });

  it("reads a missing SIM from the plain ERROR a modem without extended errors gives, and says why it is unavailable", async () => {
    const {modem} = await setup(dialect, {failCommands: ["AT+CMEE"], sim: "absent"});
    expect(modem.health().sim).toBe("unreadable");
    expect(modemUnavailableReason(modem.health(), "/dev/ttyUSB2")).toContain("no SIM, or a failed one");
  });

  it("needs only AT, the SIM and the registration: every other command refused, it is ready with nothing to report", async () => {
    const {modem, logLines} = await setup(dialect, {
      failCommands: [
        "ATE0",
        "AT+CMEE",
        "AT+CMGF",
        "AT+CSCS",
        "AT+CPMS",
        "AT+CNMI",
        "AT+CSMS",
        "AT+CSQ",
        "AT+CEREG",
        "AT+COPS"
      ],
      call: {outcome: "busy", afterMs: 30, keys: []}
    });
    expect(modem.state).toBe("ready");
    await modem.tick();
    expect(modem.health()).toMatchObject({
      sim: "ready",
      registration: "home",
      operator: null,
      signal: {rssi: null, dbm: null},
      last_error: null
    });
    expect(modemUnavailableReason(modem.health(), "/dev/ttyUSB2")).toBeNull();
    // Echo stays on: the session drops the echoed command and still reads the answer.
    expect(await modem.dial(NUMBER)).toEqual({result: "busy", reason: "busy"});
    expect(logLines.filter((line) => line.includes("refused") && !line.includes('"level":"debug"'))).toEqual([]);
  });

  it("takes ERROR to the bare AT health probe as an answer, not as the modem's last error", async () => {
    const {simulator, modem} = await setup(dialect, {atAnswer: "ERROR"});
    expect(modem.state).toBe("ready");
    const from = simulator.received.length;
    await modem.tick();
    expect(simulator.received.slice(from, from + 2)).toEqual(["AT", "AT+CSQ"]);
    expect(modem.health()).toMatchObject({state: "ready", last_error: null});
  });

  it("names +CME and +CMS error codes in words", async () => {
    const {simulator, modem} = await setup(dialect, {answers: {"AT+CMGS": "+CMS ERROR: 330"}});
    await expect(modem.sendSms(NUMBER, "Disk full on db1")).rejects.toMatchObject({
      reason: "+CMS ERROR: 330 (SMSC address unknown)"
    });
    simulator.script.answers = {"AT+CPIN?": "+CME ERROR: 13"};
    await modem.tick();
    expect(modem.health().sim).toBe("failure");
    simulator.script.answers = {"AT+CREG?": "+CME ERROR: 30"};
    await modem.tick();
    expect(modem.health().last_error).toBe("AT+CREG?: +CME ERROR: 30 (no network service)");
  });

  it("gives the line to a call dialled during a health pass before the pass's next query", async () => {
    const slow = {"AT+CSQ": 200, "AT+CREG?": 200, "AT+CEREG?": 200, "AT+COPS?": 200, "AT+CPIN?": 200};
    // Call state polled, the first poll due after the query in flight is answered: it used to
    // queue behind the pass's next query, and the one after that on a busier line.
    const {simulator, modem} = await setup(dialect, {failCommands: [CALL_URC_SETUP[dialect]]}, {callPollMs: 250});
    expect(modem.health().capabilities).not.toContain("call_urcs");
    simulator.script.slowAnswersMs = slow;
    const from = simulator.received.length;
    const pass = modem.tick();
    await simulator.waitForCommand("AT+CSQ", from);
    const dialled = modem.dial(NUMBER);
    const dial = simulator.received.indexOf(await simulator.waitForCommand("ATD", from));
    const poll = simulator.received.indexOf(await simulator.waitForCommand("AT+CLCC", dial));
    // The first call-state check comes right after the dial, no health query queued in between.
    expect(simulator.received.slice(from, poll + 1)).toEqual(["AT", "AT+CSQ", `ATD${NUMBER};`, "AT+CLCC"]);
    await pass;
    simulator.script.slowAnswersMs = {};
    expect(await dialled).toEqual({result: "answered"});
    await modem.hangUp();
    await modem.tick();
    expect(modem.health()).toMatchObject({sim: "ready", last_error: null});
  });
});
