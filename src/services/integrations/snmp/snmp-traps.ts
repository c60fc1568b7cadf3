import type {TrapRule} from "../../../domain/snmp-trap.js";

/** A rule of the built-in table, with the trap's name as its MIB gives it. */
export interface NamedTrapRule extends TrapRule {
  name: string;
}

// UPS-MIB, RFC 1628 (read in its MIB text): upsMIB ::= { mib-2 33 }; upsObjects 1, upsTraps 2.
// upsAlarm ::= { upsObjects 6 }: upsAlarmTable 2, its entry 1 with upsAlarmId 1 and upsAlarmDescr 2;
// upsWellKnownAlarms 3. upsTest ::= { upsObjects 7 }: upsTestResultsSummary 3 (donePass(1),
// doneWarning(2), doneError(3), aborted(4), inProgress(5), noTestsInitiated(6)).
const UPS_TRAPS = "1.3.6.1.2.1.33.2";
const UPS_ALARM_DESCR = "1.3.6.1.2.1.33.1.6.2.1.2";
const UPS_WELL_KNOWN_ALARMS = "1.3.6.1.2.1.33.1.6.3";
const UPS_TEST_RESULTS_SUMMARY = "1.3.6.1.2.1.33.1.7.3";

/**
 * RFC 1628's well-known alarms, in the MIB's order (upsWellKnownAlarms 1..24). "No two rows will
 * have the same value of upsAlarmDescr", so an alarm's kind is its key: the alert for one alarm of
 * one UPS merges while it lasts and resolves when the agent removes the row.
 */
const UPS_ALARMS = [
  "upsAlarmBatteryBad",
  "upsAlarmOnBattery",
  "upsAlarmLowBattery",
  "upsAlarmDepletedBattery",
  "upsAlarmTempBad",
  "upsAlarmInputBad",
  "upsAlarmOutputBad",
  "upsAlarmOutputOverload",
  "upsAlarmOnBypass",
  "upsAlarmBypassBad",
  "upsAlarmOutputOffAsRequested",
  "upsAlarmUpsOffAsRequested",
  "upsAlarmChargerFailed",
  "upsAlarmUpsOutputOff",
  "upsAlarmUpsSystemOff",
  "upsAlarmFanFailure",
  "upsAlarmFuseFailure",
  "upsAlarmGeneralFault",
  "upsAlarmDiagnosticTestFailed",
  "upsAlarmCommunicationsLost",
  "upsAlarmAwaitingPower",
  "upsAlarmShutdownPending",
  "upsAlarmShutdownImminent",
  "upsAlarmTestInProgress"
];
const UPS_ALARM_ON_BATTERY = `${UPS_WELL_KNOWN_ALARMS}.2`;

// SNMPv2-MIB (RFC 3418) and IF-MIB (RFC 2863), as bundled in net-snmp's lib/mibs: snmpTraps ::=
// { snmpMIBObjects 5 } = 1.3.6.1.6.3.1.1.5 holds coldStart 1, warmStart 2, linkDown 3, linkUp 4;
// linkDown and linkUp carry OBJECTS { ifIndex, ifAdminStatus, ifOperStatus }, and ifIndex ::=
// { ifEntry 1 } with ifEntry ::= { ifTable 1 }, ifTable ::= { interfaces 2 }, interfaces ::= { mib-2 2 }.
const SNMP_TRAPS = "1.3.6.1.6.3.1.1.5";
const IF_INDEX = "1.3.6.1.2.1.2.2.1.1";

// Printer-MIB v2, RFC 3805 (read in its MIB text): printmib ::= { mib-2 43 }, prtAlert ::= { printmib 18 },
// prtAlertEntry ::= { prtAlertTable 1 } with prtAlertTable ::= { prtAlert 1 }: prtAlertGroup 4,
// prtAlertGroupIndex 5, prtAlertCode 7. printerV1Alert ::= { prtAlert 2 }, printerV2AlertPrefix ::=
// { printerV1Alert 0 }, printerV2Alert ::= { printerV2AlertPrefix 1 }: "sent whenever a critical
// event is added to the prtAlertTable" (there is no trap for its removal).
const PRINTER_V2_ALERT = "1.3.6.1.2.1.43.18.2.0.1";
const PRT_ALERT_ENTRY = "1.3.6.1.2.1.43.18.1.1";

// APC PowerNet-MIB v4.2.6 (read in its MIB text): apc ::= { enterprises 318 }; SNMPv1 TRAP-TYPEs with
// ENTERPRISE apc: upsOnBattery ::= 5, lowBattery ::= 7, powerRestored ::= 9, returnFromLowBattery ::= 11.
// As SNMPv2 notifications (RFC 3584 section 3.1) they are apc.0.5, apc.0.7, apc.0.9 and apc.0.11.
const APC_TRAPS = "1.3.6.1.4.1.318.0";

/** The traps Klaxon reads without any rule: common UPS, switch and printer notifications. */
export const NAMED_TRAPS: readonly NamedTrapRule[] = [
  {
    name: "upsTrapOnBattery",
    trap_oid: `${UPS_TRAPS}.1`,
    action: "fire",
    // Resent every minute while on battery: the repeats merge. Resolved by the removal of the
    // upsAlarmOnBattery row (upsTrapAlarmEntryRemoved), which the MIB sends for it.
    alert_key: `ups-alarm/${UPS_ALARM_ON_BATTERY}`,
    title: "UPS on battery",
    priority: "high"
  },
  {
    name: "upsTrapAlarmEntryAdded",
    trap_oid: `${UPS_TRAPS}.3`,
    action: "fire",
    alert_key: `ups-alarm/{${UPS_ALARM_DESCR}}`,
    title: `UPS alarm {${UPS_ALARM_DESCR}}`,
    priority: "high"
  },
  {
    name: "upsTrapAlarmEntryRemoved",
    trap_oid: `${UPS_TRAPS}.4`,
    action: "resolve",
    alert_key: `ups-alarm/{${UPS_ALARM_DESCR}}`
  },
  ...(
    [
      ["3", "fire", "medium", "UPS self-test failed"],
      ["2", "fire", "low", "UPS self-test completed with a warning"],
      ["1", "resolve", undefined, undefined]
    ] as const
  ).map(([summary, action, priority, title]): NamedTrapRule => ({
    name: "upsTrapTestCompleted",
    trap_oid: `${UPS_TRAPS}.2`,
    when: [{oid: UPS_TEST_RESULTS_SUMMARY, equals: summary}],
    action,
    alert_key: "ups-test",
    ...(title ? {title, priority} : {})
  })),
  {
    name: "linkDown",
    trap_oid: `${SNMP_TRAPS}.3`,
    action: "fire",
    alert_key: `link/{${IF_INDEX}}`,
    title: `Link down on interface {${IF_INDEX}}`
  },
  {name: "linkUp", trap_oid: `${SNMP_TRAPS}.4`, action: "resolve", alert_key: `link/{${IF_INDEX}}`},
  {
    name: "coldStart",
    trap_oid: `${SNMP_TRAPS}.1`,
    action: "fire",
    alert_key: "restart",
    title: "Agent restarted (coldStart: its configuration may have changed)",
    priority: "low"
  },
  {
    name: "warmStart",
    trap_oid: `${SNMP_TRAPS}.2`,
    action: "fire",
    alert_key: "restart",
    title: "Agent restarted (warmStart)",
    priority: "low"
  },
  {
    name: "printerV2Alert",
    trap_oid: PRINTER_V2_ALERT,
    action: "fire",
    alert_key: `printer/{${PRT_ALERT_ENTRY}.7}/{${PRT_ALERT_ENTRY}.4}.{${PRT_ALERT_ENTRY}.5}`,
    title: `Printer alert code {${PRT_ALERT_ENTRY}.7} (group {${PRT_ALERT_ENTRY}.4} #{${PRT_ALERT_ENTRY}.5})`,
    priority: "medium"
  },
  {
    name: "upsOnBattery",
    trap_oid: `${APC_TRAPS}.5`,
    action: "fire",
    alert_key: "apc/on-battery",
    title: "UPS on battery",
    priority: "high"
  },
  {name: "powerRestored", trap_oid: `${APC_TRAPS}.9`, action: "resolve", alert_key: "apc/on-battery"},
  {
    name: "lowBattery",
    trap_oid: `${APC_TRAPS}.7`,
    action: "fire",
    alert_key: "apc/low-battery",
    title: "UPS battery low: power to the load will be cut soon",
    priority: "critical"
  },
  {name: "returnFromLowBattery", trap_oid: `${APC_TRAPS}.11`, action: "resolve", alert_key: "apc/low-battery"}
];

/** Names of the OIDs a trap may carry as values or be: the named traps and RFC 1628's alarms. */
export const OID_NAMES: ReadonlyMap<string, string> = new Map([
  ...NAMED_TRAPS.map((rule) => [rule.trap_oid, rule.name] as const),
  ...UPS_ALARMS.map((name, index) => [`${UPS_WELL_KNOWN_ALARMS}.${index + 1}`, name] as const),
  [`${SNMP_TRAPS}.5`, "authenticationFailure"]
]);
