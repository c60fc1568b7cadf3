import {isAbsolute} from "node:path";
import {modbusPointProblem, widthOf, type ModbusTable, type ModbusType} from "../../../domain/plc/modbus-points.js";
import {
  PLC_DEFAULTS,
  type ModbusFields,
  type OpcUaFields,
  type PlcIntegrationFields,
  type PlcPointFields
} from "../../../domain/plc/plc-integration.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {FieldError} from "../../shared/errors.js";

/** The PLC fields a client writes. */
export type PlcInput = PlcIntegrationFields;

/** The PLC fields in the order the API lists them; writable by merge patch like the others. */
export const PLC_FIELDS = [
  "modbus",
  "opcua",
  "points",
  "unreachable_after_seconds"
] as const satisfies readonly (keyof PlcIntegrationFields)[];

export const PLC_KINDS: readonly IntegrationRecord["kind"][] = ["modbus", "opcua"];

/** A point's live state, as GET .../{id} shows it. */
export interface PointStateView {
  value: number | boolean | null;
  quality: "good" | "bad" | "uncertain";
  alarm: "normal" | "pending" | "active" | "chattering";
  read_at: string | null;
}

/** The device link's health. */
export interface LinkView {
  state: "connected" | "unreachable";
  since: string;
  last_error: string | null;
}

/** What the supervisor of the PLC links knows of one integration now (null while its link starts). */
export interface PlcLiveState {
  link: LinkView;
  points: Record<string, PointStateView>;
}

/** What the API shows of a PLC integration: the OPC UA password only as whether one is set. */
export interface PlcView {
  modbus?: ModbusFields;
  opcua?: Omit<OpcUaFields, "password"> & {password_set: boolean};
  points: (PlcPointFields & {state: PointStateView | null})[];
  unreachable_after_seconds: number;
  link: LinkView | null;
}

function modbusProblems(modbus: ModbusFields | undefined): FieldError[] {
  if (!modbus)
    return [{pointer: "/modbus", detail: "a modbus integration needs its device: host (TCP) or serial_port (RTU)"}];
  const tcp = Boolean(modbus.host);
  const rtu = Boolean(modbus.serial_port);
  if (tcp === rtu)
    return [
      {
        pointer: "/modbus",
        detail: tcp
          ? "give host (Modbus TCP) or serial_port (Modbus RTU), not both"
          : "give host (Modbus TCP) or serial_port (Modbus RTU)"
      }
    ];
  const errors: FieldError[] = [];
  if (rtu && !isAbsolute(modbus.serial_port!))
    errors.push({
      pointer: "/modbus/serial_port",
      detail: "the serial device's absolute path, e.g. /dev/serial/by-id/usb-FTDI_...-port0"
    });
  if (tcp && (modbus.baud_rate !== undefined || modbus.parity !== undefined || modbus.stop_bits !== undefined))
    errors.push({pointer: "/modbus", detail: "baud_rate, parity and stop_bits are for a serial_port (RTU)"});
  if (rtu && modbus.port !== undefined) errors.push({pointer: "/modbus/port", detail: "port is for a host (TCP)"});
  return errors;
}

function opcuaProblems(opcua: OpcUaFields): FieldError[] {
  const errors: FieldError[] = [];
  if (opcua.password && !opcua.user)
    errors.push({pointer: "/opcua/user", detail: "a password needs the user it belongs to"});
  if ((opcua.security_mode === "None") !== (opcua.security_policy === "None"))
    errors.push({
      pointer: "/opcua/security_policy",
      detail:
        'security mode "None" goes with policy "None"; Sign and SignAndEncrypt need a policy such as Basic256Sha256'
    });
  const bands = opcua.severity_bands ?? {};
  const order = (["critical", "high", "medium", "low"] as const).filter((priority) => bands[priority] !== undefined);
  for (const [index, priority] of order.entries())
    if (index > 0 && bands[priority]! >= bands[order[index - 1]]!)
      errors.push({
        pointer: `/opcua/severity_bands/${priority}`,
        detail: `a ${priority} band starts below the ${order[index - 1]} band (${bands[order[index - 1]]})`
      });
  return errors;
}

function pointProblems(kind: IntegrationRecord["kind"], point: PlcPointFields, at: string): FieldError[] {
  const errors: FieldError[] = [];
  if (kind === "opcua") {
    if (!point.node_id)
      errors.push({
        pointer: `${at}/node_id`,
        detail: 'an OPC UA point names its node, e.g. "ns=2;s=Boiler.Temperature"'
      });
    for (const field of ["table", "address", "type", "word_order"] as const)
      if (point[field] !== undefined) errors.push({pointer: `${at}/${field}`, detail: `${field} is for Modbus points`});
  } else {
    if (point.node_id !== undefined) errors.push({pointer: `${at}/node_id`, detail: "node_id is for OPC UA points"});
    for (const field of ["table", "address", "type"] as const)
      if (point[field] === undefined)
        errors.push({pointer: `${at}/${field}`, detail: `a Modbus point needs its ${field}`});
    if (errors.length) return errors;
    const problem = modbusPointProblem(point as {table: ModbusTable; address: number; type: ModbusType});
    if (problem) errors.push({pointer: `${at}/${/address/.test(problem) ? "address" : "type"}`, detail: problem});
  }
  const alarm = point.alarm;
  if (!alarm) return errors;
  const comparing = !["bit", "change"].includes(alarm.when);
  if (comparing && (alarm.value === undefined || alarm.value === null))
    errors.push({pointer: `${at}/alarm/value`, detail: `"${alarm.when}" compares with a value: give it`});
  if (alarm.when === "bit") {
    const bits = point.type ? widthOf(point.type) * 16 : 32;
    if (point.type === "float32" || point.type === "bool")
      errors.push({pointer: `${at}/alarm/when`, detail: `a bit of a word needs an integer type, not ${point.type}`});
    if (alarm.bit === undefined || alarm.bit === null || alarm.bit >= bits)
      errors.push({pointer: `${at}/alarm/bit`, detail: `which bit of the word: 0-${bits - 1}`});
    if (alarm.value !== undefined && alarm.value !== null && alarm.value !== 0 && alarm.value !== 1)
      errors.push({pointer: `${at}/alarm/value`, detail: "the bit's alarm value: 1 (the default) or 0"});
  } else if (alarm.bit !== undefined && alarm.bit !== null)
    errors.push({pointer: `${at}/alarm/bit`, detail: 'bit is for "when": "bit"'});
  if (alarm.deadband && !comparing)
    errors.push({pointer: `${at}/alarm/deadband`, detail: "a deadband is for >, >=, < and <="});
  return errors;
}

/**
 * The PLC fields' problems: a modbus integration needs its device and points that fit their
 * tables; an opcua one its endpoint and node ids; another kind may not carry them. The API's
 * schema has checked types and lengths.
 */
export function plcFieldProblems(kind: IntegrationRecord["kind"], input: PlcInput): FieldError[] {
  const given = PLC_FIELDS.filter((field) => input[field] !== undefined && input[field] !== null);
  if (!PLC_KINDS.includes(kind))
    return given.map((field) => ({pointer: `/${field}`, detail: `only a modbus or opcua integration has ${field}`}));
  const errors: FieldError[] = [];
  if (kind === "modbus") {
    errors.push(...modbusProblems(input.modbus));
    if (input.opcua) errors.push({pointer: "/opcua", detail: "a modbus integration has modbus settings, not opcua"});
  } else {
    if (!input.opcua) errors.push({pointer: "/opcua", detail: "an opcua integration needs its server: endpoint_url"});
    if (input.modbus) errors.push({pointer: "/modbus", detail: "an opcua integration has opcua settings, not modbus"});
    if (input.opcua) errors.push(...opcuaProblems(input.opcua));
  }
  const points = input.points ?? [];
  if (!points.length && !(kind === "opcua" && input.opcua?.alarms))
    errors.push({pointer: "/points", detail: "watch at least one point (or, for OPC UA, the server's alarms)"});
  const seen = new Set<string>();
  for (const [index, point] of points.entries()) {
    if (seen.has(point.name))
      errors.push({pointer: `/points/${index}/name`, detail: `two points are named ${point.name}`});
    seen.add(point.name);
    errors.push(...pointProblems(kind, point, `/points/${index}`));
  }
  return errors;
}

/** The PLC fields to store for a PLC integration (none for other kinds). */
export function plcRecordFields(kind: IntegrationRecord["kind"], input: PlcInput): PlcIntegrationFields {
  if (!PLC_KINDS.includes(kind)) return {};
  return {
    ...(kind === "modbus" ? {modbus: input.modbus} : {opcua: input.opcua}),
    points: input.points ?? [],
    unreachable_after_seconds: input.unreachable_after_seconds ?? PLC_DEFAULTS.unreachable_after_seconds
  };
}

/** The stored PLC fields as a merge patch's starting document (the OPC UA password too, so leaving it out keeps it). */
export function plcPatchBase(integration: IntegrationRecord): PlcInput {
  return PLC_KINDS.includes(integration.kind)
    ? Object.fromEntries(PLC_FIELDS.map((field) => [field, integration[field]]))
    : {};
}

/** What the API shows of a PLC integration, with its live state (nothing for other kinds). */
export function plcView(integration: IntegrationRecord, live: PlcLiveState | null): Partial<PlcView> {
  if (!PLC_KINDS.includes(integration.kind)) return {};
  const {password, ...opcua} = integration.opcua ?? ({} as OpcUaFields);
  return {
    ...(integration.kind === "modbus"
      ? {modbus: integration.modbus}
      : {opcua: {...opcua, password_set: Boolean(password)}}),
    points: (integration.points ?? []).map((point) => ({...point, state: live?.points[point.name] ?? null})),
    unreachable_after_seconds: integration.unreachable_after_seconds ?? PLC_DEFAULTS.unreachable_after_seconds,
    link: live?.link ?? null
  };
}
