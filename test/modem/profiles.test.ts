import {describe, expect, it} from "vitest";
import {bestRegistration, parseCpin, parseCsq, parseOperator, parseRegistration} from "../../src/modem/health.js";
import {PROFILES, profileByName, ttsArgument} from "../../src/modem/profiles.js";

describe("modem profiles", () => {
  it.each([
    ["sim800", "+DTMF: 1", "1"],
    ["sim800", "+DTMF: *,200", "*"],
    ["sim7600", "+RXDTMF: #", "#"],
    ["quectel", "+QTONEDET: 49", "1"],
    ["quectel", "+QTONEDET: 42", "*"],
    ["quectel", "+QTONEDET: 35", "#"],
    ["quectel", "+QTONEDET: 65", "A"],
    ["quectel", "+QTONEDET: 120", null],
    ["sim800", "+RXDTMF: 1", null]
  ] as const)("%s reads %s as key %s", (name, line, key) => {
    expect(PROFILES[name].parseKey(line)).toBe(key);
  });

  it.each([
    ["sim800", '+CLCC: 1,0,3,0,0,"+4915112345678",145', {kind: "state", state: "alerting"}],
    ["sim800", '+CLCC: 1,0,0,0,0,"+4915112345678",145', {kind: "state", state: "active"}],
    ["sim800", '+CLCC: 1,0,6,0,0,"+4915112345678",145', {kind: "state", state: "ended"}],
    ["sim800", '+CLCC: 1,1,4,0,0,"+4915112345678",145', null],
    ["sim7600", "VOICE CALL: BEGIN", {kind: "state", state: "active"}],
    ["sim7600", "VOICE CALL: END: 000352", {kind: "state", state: "ended"}],
    ["quectel", "BUSY", {kind: "result", code: "BUSY"}],
    ["quectel", "+CSQ: 1,99", null]
  ] as const)("%s reads %s as a call signal", (name, line, signal) => {
    expect(PROFILES[name].parseCallSignal(line)).toEqual(signal);
  });

  it("speaks plain ASCII as mode 2 and anything else as UCS2 hex, so quotes cannot break out", () => {
    expect(ttsArgument("Disk full", 100)).toBe('2,"Disk full"');
    expect(ttsArgument('say "hi"', 100)).toBe('1,"00730061007900200022006800690022"');
    expect(ttsArgument("Grüße", 100)).toBe('1,"0047007200FC00DF0065"');
    expect(() => ttsArgument("x".repeat(600), 543)).toThrow(RangeError);
  });

  it("names an unknown profile", () => {
    expect(() => profileByName("huawei")).toThrow(/unknown modem profile "huawei"/);
  });
});

describe("health readers", () => {
  it.each([
    ["+CSQ: 0,99", {rssi: 0, dbm: -113}],
    ["+CSQ: 20,99", {rssi: 20, dbm: -73}],
    ["+CSQ: 31,0", {rssi: 31, dbm: -51}],
    ["+CSQ: 99,99", {rssi: null, dbm: null}]
  ])("reads %s", (line, signal) => {
    expect(parseCsq(line)).toEqual(signal);
  });

  it.each([
    ["+CREG: 0,1", "home"],
    ['+CREG: 2,5,"1A2B","0C3D"', "roaming"],
    ["+CREG: 2", "searching"],
    ["+CEREG: 0,3", "denied"],
    ["+CGREG: 0,0", "not_registered"]
  ])("reads %s as %s", (line, registration) => {
    expect(parseRegistration(line)).toBe(registration);
  });

  it("counts registration on either radio and reads operator and SIM state", () => {
    expect(bestRegistration("not_registered", "home")).toBe("home");
    expect(parseOperator('+COPS: 0,0,"Klaxon Net",7')).toBe("Klaxon Net");
    expect(parseOperator("+COPS: 0")).toBeNull();
    expect(parseCpin("+CPIN: SIM PIN")).toBe("pin_required");
    expect(parseCpin("+CPIN: READY")).toBe("ready");
  });
});
