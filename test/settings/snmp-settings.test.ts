import {describe, expect, it} from "vitest";
import {loadSettings} from "../../src/settings/load-settings.js";

describe("the SNMP trap listener's settings", () => {
  it("leave it off unless a port is set, on every interface", () => {
    expect(loadSettings({}).settings.snmp).toEqual({trap_port: 0, trap_address: "0.0.0.0"});
    expect(
      loadSettings({KLAXON_SNMP_TRAP_PORT: "162", KLAXON_SNMP_TRAP_ADDRESS: "192.168.10.2"}).settings.snmp
    ).toEqual({trap_port: 162, trap_address: "192.168.10.2"});
  });

  it("refuse a port that is none and an address that is not IPv4, naming the setting", () => {
    expect(() => loadSettings({KLAXON_SNMP_TRAP_PORT: "70000"})).toThrow(/snmp.trap_port: must be 0 \(off\) or a port/);
    expect(() => loadSettings({KLAXON_SNMP_TRAP_PORT: "16.5"})).toThrow(/snmp.trap_port/);
    expect(() => loadSettings({KLAXON_SNMP_TRAP_ADDRESS: "plant-lan"})).toThrow(/snmp.trap_address: must be an IPv4/);
  });
});
