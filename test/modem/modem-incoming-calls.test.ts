import {describe, expect, it} from "vitest";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

// Calls to the modem at the modem's level: announced once per ringing call with the caller's
// number, answered or rejected on request, and never in the way of a call Klaxon makes.

const setup = useModemOnSimulator();
const CALLER = "+4917612345678";
const HANG_UP = {sim800: "ATH", sim7600: "AT+CHUP", quectel: "AT+CHUP"} as const;

function announcements(modem: import("../../src/modem/modem.js").Modem): (string | null)[] {
  const seen: (string | null)[] = [];
  modem.on("incoming_call", (number) => seen.push(number));
  return seen;
}

describe.each(["sim800", "sim7600", "quectel"] as const)("calls to the modem, %s", (dialect) => {
  it("announces a ringing call once with the caller's number, answers it, takes the caller's keys, sees the caller hang up", async () => {
    const {simulator, modem} = await setup(dialect);
    expect(modem.health().capabilities).toContain("caller_id");
    const seen = announcements(modem);
    const ringing = new Promise((resolve) => modem.once("incoming_call", resolve));
    simulator.incomingCall(CALLER, {keys: ["1"], hangUpAfterKeys: true});
    await ringing;
    // RING and +CLIP repeat while it rings; it is still one call.
    const rings = simulator.count("AT");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(simulator.count("AT")).toBe(rings);
    expect(seen).toEqual([CALLER]);

    expect(await modem.answerIncoming()).toBe(true);
    expect(simulator.incoming).toEqual({number: CALLER, answered: true});
    expect(modem.lineBusy).toBe(true);
    await modem.speak("Alert 1 of 1.");
    expect(await modem.waitForKey(1000)).toEqual({kind: "key", key: "1"});
    // The caller hung up after the key: the call ends and the line is free, without our hang-up.
    expect(await modem.waitForKey(1000)).toMatchObject({kind: "ended"});
    await modem.hangUpIncoming();
    expect(modem.lineBusy).toBe(false);
    expect(simulator.count(HANG_UP[dialect])).toBe(0);
  });

  it("rejects a ringing call without answering it, and a withheld number is announced as null", async () => {
    const {simulator, modem} = await setup(dialect);
    const seen = announcements(modem);
    const ringing = new Promise((resolve) => modem.once("incoming_call", resolve));
    simulator.incomingCall(null);
    await ringing;
    await modem.rejectIncoming();
    expect(simulator.count(HANG_UP[dialect])).toBe(1);
    expect(simulator.count("ATA")).toBe(0);
    expect(simulator.incoming).toBeNull();
    expect(seen).toEqual([null]);
    // Nothing rings any more: answering now does nothing.
    expect(await modem.answerIncoming()).toBe(false);
  });
});

describe("calls to the modem without a caller's number", () => {
  it("announces a caller unknown on the second RING when no +CLIP came after the first", async () => {
    const {simulator, modem} = await setup("sim800");
    const seen = announcements(modem);
    const ringing = new Promise((resolve) => modem.once("incoming_call", resolve));
    simulator.incomingCall(CALLER, {keys: [], noCallerId: true});
    await ringing;
    expect(seen).toEqual([null]);
    await modem.rejectIncoming();
    expect(simulator.count("ATH")).toBe(1);
  });
});

describe("calls to the modem and Klaxon's own calls", () => {
  it("leaves a call that comes in during Klaxon's call alone: no announcement, no answer, no hang-up of ours", async () => {
    const {simulator, modem} = await setup("sim800", {call: {outcome: "answer", afterMs: 40, keys: ["1"]}});
    const seen = announcements(modem);
    expect(await modem.dial(NUMBER)).toEqual({result: "answered"});
    simulator.ringWhileBusy(CALLER);
    await modem.rejectIncoming();
    expect(await modem.answerIncoming()).toBe(false);
    await modem.speak("Klaxon alert.");
    expect(await modem.waitForKey(1000)).toEqual({kind: "key", key: "1"});
    expect(seen).toEqual([]);
    expect(simulator.count("ATA")).toBe(0);
    expect(simulator.count("ATH")).toBe(0);
    await modem.hangUp();
  });

  it("makes a dial wait for an answered call to the modem, then dials", async () => {
    const {simulator, modem} = await setup("sim7600", {call: {outcome: "answer", afterMs: 40, keys: []}});
    const ringing = new Promise((resolve) => modem.once("incoming_call", resolve));
    simulator.incomingCall(CALLER);
    await ringing;
    expect(await modem.answerIncoming()).toBe(true);
    const dialled = modem.dial(NUMBER);
    // Klaxon's hang-up of its own (not yet made) call leaves the caller's call alone.
    await modem.hangUp();
    expect(simulator.incoming).toEqual({number: CALLER, answered: true});
    expect(simulator.count("ATD")).toBe(0);
    await modem.hangUpIncoming();
    expect(await dialled).toEqual({result: "answered"});
    expect(simulator.received.indexOf(`ATD${NUMBER};`)).toBeGreaterThan(simulator.received.indexOf("AT+CHUP"));
    await modem.hangUp();
  });
});
