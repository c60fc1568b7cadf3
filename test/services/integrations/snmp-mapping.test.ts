import {createRequire} from "node:module";
import {dirname, join} from "node:path";
import fc from "fast-check";
import {createModuleStore, OidFormat} from "net-snmp";
import {describe, expect, it} from "vitest";
import {trapActions, trapText, type TrapFacts} from "../../../src/services/integrations/snmp/snmp-mapping.js";
import type {TrapRule} from "../../../src/domain/snmp-trap.js";
import {NAMED_TRAPS} from "../../../src/services/integrations/snmp/snmp-traps.js";

const UPS_ON_BATTERY = "1.3.6.1.2.1.33.2.1";
const UPS_ALARM_ADDED = "1.3.6.1.2.1.33.2.3";
const UPS_ALARM_REMOVED = "1.3.6.1.2.1.33.2.4";
const UPS_ALARM_DESCR = "1.3.6.1.2.1.33.1.6.2.1.2";
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const LINK_UP = "1.3.6.1.6.3.1.1.5.4";
const IF_INDEX = "1.3.6.1.2.1.2.2.1.1";

function trap(trapOid: string, varbinds: TrapFacts["varbinds"] = [], agent = "192.0.2.10"): TrapFacts {
  return {agent, trapOid, varbinds};
}

function alertId(actions: ReturnType<typeof trapActions>): string {
  expect(actions).toHaveLength(1);
  return actions[0].alert_id;
}

describe("the built-in traps", () => {
  it("fire on upsTrapOnBattery and resolve on the removal of the upsAlarmOnBattery row", () => {
    const fire = trapActions(trap(UPS_ON_BATTERY), [], "medium");
    expect(fire).toEqual([
      expect.objectContaining({
        action: "fire",
        message: "UPS on battery (192.0.2.10)",
        priority: "high",
        source: "192.0.2.10"
      })
    ]);
    const removed = trap(UPS_ALARM_REMOVED, [
      {oid: "1.3.6.1.2.1.33.1.6.2.1.1.4", value: "4"},
      {oid: `${UPS_ALARM_DESCR}.4`, value: "1.3.6.1.2.1.33.1.6.3.2"}
    ]);
    expect(trapActions(removed, [], "medium")).toEqual([{action: "resolve", alert_id: alertId(fire)}]);
  });

  it("name a UPS alarm in the title and pair its added and removed traps, one alert per UPS and alarm", () => {
    fc.assert(
      fc.property(
        fc.ipV4(),
        fc.ipV4(),
        fc.integer({min: 1, max: 24}),
        fc.integer({min: 1, max: 24}),
        fc.integer({min: 1, max: 1000}),
        (agent, otherAgent, alarm, otherAlarm, row) => {
          const binding = (kind: number) => [{oid: `${UPS_ALARM_DESCR}.${row}`, value: `1.3.6.1.2.1.33.1.6.3.${kind}`}];
          const added = trapActions(trap(UPS_ALARM_ADDED, binding(alarm), agent), [], "medium");
          const removed = trapActions(trap(UPS_ALARM_REMOVED, binding(alarm), agent), [], "medium");
          expect(removed[0].action).toBe("resolve");
          expect(alertId(removed)).toBe(alertId(added));
          const other = trapActions(trap(UPS_ALARM_REMOVED, binding(otherAlarm), otherAgent), [], "medium");
          expect(alertId(other) === alertId(added)).toBe(agent === otherAgent && alarm === otherAlarm);
        }
      )
    );
    const lowBattery = trapActions(
      trap(UPS_ALARM_ADDED, [{oid: `${UPS_ALARM_DESCR}.7`, value: "1.3.6.1.2.1.33.1.6.3.3"}]),
      [],
      "medium"
    );
    expect(lowBattery[0]).toMatchObject({message: "UPS alarm upsAlarmLowBattery (192.0.2.10)"});
  });

  it("pair linkDown and linkUp per interface", () => {
    fc.assert(
      fc.property(fc.integer({min: 1, max: 5000}), fc.integer({min: 1, max: 5000}), (ifIndex, otherIndex) => {
        const binding = (index: number) => [
          {oid: `${IF_INDEX}.${index}`, value: String(index)},
          {oid: `1.3.6.1.2.1.2.2.1.8.${index}`, value: "2"}
        ];
        const down = trapActions(trap(LINK_DOWN, binding(ifIndex)), [], "medium");
        expect(down[0]).toMatchObject({
          action: "fire",
          priority: "medium",
          message: `Link down on interface ${ifIndex} (192.0.2.10)`
        });
        expect(alertId(trapActions(trap(LINK_UP, binding(ifIndex)), [], "medium"))).toBe(alertId(down));
        expect(alertId(trapActions(trap(LINK_UP, binding(otherIndex)), [], "medium")) === alertId(down)).toBe(
          ifIndex === otherIndex
        );
      })
    );
  });

  it("read a UPS self-test's result: an error fires, a pass resolves, an aborted test maps to nothing", () => {
    const completed = (summary: string) =>
      trapActions(trap("1.3.6.1.2.1.33.2.2", [{oid: "1.3.6.1.2.1.33.1.7.3.0", value: summary}]), [], "info");
    expect(completed("3")[0]).toMatchObject({
      action: "fire",
      priority: "medium",
      message: "UPS self-test failed (192.0.2.10)"
    });
    expect(completed("1")).toEqual([{action: "resolve", alert_id: alertId(completed("3"))}]);
    expect(completed("4")).toEqual([]);
  });

  it("pair APC PowerNet's upsOnBattery and powerRestored, as a v1 trap arrives (enterprise 318, 0, specific)", () => {
    const onBattery = trapActions(trap("1.3.6.1.4.1.318.0.5"), [], "low");
    expect(onBattery[0]).toMatchObject({action: "fire", priority: "high"});
    expect(trapActions(trap("1.3.6.1.4.1.318.0.9"), [], "low")).toEqual([
      {action: "resolve", alert_id: alertId(onBattery)}
    ]);
  });

  it("agree with the MIBs net-snmp ships (SNMPv2-MIB, IF-MIB) on every trap and binding they define", () => {
    const mibs = join(dirname(createRequire(import.meta.url).resolve("net-snmp")), "lib", "mibs");
    const store = createModuleStore();
    for (const file of ["IANAifType-MIB.mib", "IF-MIB.mib"]) store.loadFromFile(join(mibs, file));
    const oid = (name: string) => store.translate(name, OidFormat.oid);
    const named = new Map(NAMED_TRAPS.map((rule) => [rule.name, rule]));
    for (const name of ["coldStart", "warmStart"]) expect(named.get(name)?.trap_oid).toBe(oid(`SNMPv2-MIB::${name}`));
    for (const name of ["linkDown", "linkUp"]) {
      expect(named.get(name)?.trap_oid).toBe(oid(`IF-MIB::${name}`));
      expect(named.get(name)?.alert_key).toBe(`link/{${oid("IF-MIB::ifIndex")}}`);
    }
  });
});

describe("an integration's own rules", () => {
  const rules: TrapRule[] = [
    {
      trap_oid: "1.3.6.1.4.1.99999.0.1",
      when: [{oid: "1.3.6.1.4.1.99999.1.2", equals: "alarm"}],
      action: "fire",
      alert_key: "pump/{1.3.6.1.4.1.99999.1.1}",
      title: "Pump {1.3.6.1.4.1.99999.1.1} stopped",
      priority: "critical"
    },
    {
      trap_oid: "1.3.6.1.4.1.99999.0.1",
      when: [{oid: "1.3.6.1.4.1.99999.1.2", equals: "ok"}],
      action: "resolve",
      alert_key: "pump/{1.3.6.1.4.1.99999.1.1}"
    },
    {trap_oid: LINK_DOWN, action: "fire", alert_key: "uplink", title: "Uplink lost", priority: "critical"}
  ];
  const pump = (state: string) =>
    trap("1.3.6.1.4.1.99999.0.1", [
      {oid: "1.3.6.1.4.1.99999.1.1.0", value: "P-7"},
      {oid: "1.3.6.1.4.1.99999.1.2.0", value: state}
    ]);

  it("map a trap by its bindings' values, with the first matching rule deciding", () => {
    const fire = trapActions(pump("alarm"), rules, "medium");
    expect(fire).toEqual([
      {
        action: "fire",
        alert_id: "192.0.2.10/pump/P-7",
        message: "Pump P-7 stopped (192.0.2.10)",
        priority: "critical",
        source: "192.0.2.10",
        link: null,
        service: null,
        environment: null
      }
    ]);
    expect(trapActions(pump("ok"), rules, "medium")).toEqual([{action: "resolve", alert_id: "192.0.2.10/pump/P-7"}]);
    expect(trapActions(pump("maintenance"), rules, "medium")).toEqual([]);
  });

  it("come before the built-in table", () => {
    expect(trapActions(trap(LINK_DOWN, [{oid: `${IF_INDEX}.3`, value: "3"}]), rules, "medium")[0]).toMatchObject({
      alert_id: "192.0.2.10/uplink",
      priority: "critical"
    });
  });
});

describe("an unknown trap", () => {
  it("maps to nothing and is kept as text: its OID and each binding", () => {
    const unknown = trap("1.3.6.1.4.1.8072.9999.1", [{oid: "1.3.6.1.2.1.1.5.0", value: "boiler-2"}]);
    expect(trapActions(unknown, [], "medium")).toEqual([]);
    expect(trapText(unknown)).toBe(
      "1.3.6.1.4.1.8072.9999.1 (1.3.6.1.4.1.8072.9999.1) from 192.0.2.10\n1.3.6.1.2.1.1.5.0 = boiler-2"
    );
  });
});
