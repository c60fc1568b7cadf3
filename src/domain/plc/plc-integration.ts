import type {Priority} from "../vocabulary.js";
import type {AlarmCondition, AlarmSpec} from "./alarm-conditioning.js";
import type {ModbusPoint, ModbusTable, ModbusType, WordOrder} from "./modbus-points.js";

/** A point's alarm as stored (the API's snake_case); absent fields take the defaults below. */
export interface PlcAlarmFields {
  when: AlarmCondition;
  value?: number | null;
  bit?: number | null;
  deadband?: number;
  on_delay_seconds?: number;
  off_delay_seconds?: number;
  priority?: Priority | null;
  title?: string | null;
  chatter_per_minute?: number;
}

/** One point: Modbus (table, address, type) or OPC UA (node_id). */
export interface PlcPointFields {
  name: string;
  table?: ModbusTable;
  address?: number;
  type?: ModbusType;
  word_order?: WordOrder;
  node_id?: string;
  scale?: number;
  offset?: number;
  unit?: string;
  alarm?: PlcAlarmFields | null;
}

/** Where a Modbus device is: host (TCP) or serial_port (RTU). */
export interface ModbusFields {
  host?: string | null;
  port?: number;
  serial_port?: string | null;
  baud_rate?: number;
  parity?: "none" | "even" | "odd";
  stop_bits?: 1 | 2;
  unit_id?: number;
  poll_interval_ms?: number;
  timeout_ms?: number;
}

export const OPCUA_SECURITY_MODES = ["None", "Sign", "SignAndEncrypt"] as const;

/** An OPC UA server and how to log in; the password is write-only. */
export interface OpcUaFields {
  endpoint_url: string;
  security_mode: (typeof OPCUA_SECURITY_MODES)[number];
  security_policy: string;
  user: string | null;
  password: string | null;
  /** Subscribe to the server's Alarms & Conditions events. */
  alarms: boolean;
  /** The lowest OPC UA severity (1-1000) of each priority; below the lowest: info. */
  severity_bands?: Partial<Record<Priority, number>>;
}

/** A modbus or opcua integration's own fields on its record. */
export interface PlcIntegrationFields {
  modbus?: ModbusFields;
  opcua?: OpcUaFields;
  points?: PlcPointFields[];
  /** How long the device may fail to answer before its target is paged. */
  unreachable_after_seconds?: number;
}

export const PLC_DEFAULTS = {
  port: 502,
  unit_id: 1,
  baud_rate: 9600,
  parity: "even",
  stop_bits: 1,
  poll_interval_ms: 1000,
  timeout_ms: 1000,
  unreachable_after_seconds: 60,
  chatter_per_minute: 10,
  severity_bands: {critical: 800, high: 600, medium: 400, low: 200}
} as const;

/** The conditioning of a point's alarm, defaults filled in. */
export function alarmSpecOf(point: PlcPointFields, alarm: PlcAlarmFields, defaultPriority: Priority): AlarmSpec {
  return {
    when: alarm.when,
    value: alarm.value ?? undefined,
    bit: alarm.bit ?? undefined,
    deadband: alarm.deadband ?? 0,
    onDelaySeconds: alarm.on_delay_seconds ?? 0,
    offDelaySeconds: alarm.off_delay_seconds ?? 0,
    priority: alarm.priority ?? defaultPriority,
    title: alarm.title ?? `${point.name} {value} {unit}`,
    chatterPerMinute: alarm.chatter_per_minute ?? PLC_DEFAULTS.chatter_per_minute
  };
}

/** A stored Modbus point as the link reads it. */
export function modbusPointOf(point: PlcPointFields): ModbusPoint {
  return {
    name: point.name,
    table: point.table as ModbusTable,
    address: point.address ?? 0,
    type: point.type as ModbusType,
    wordOrder: point.word_order ?? "high_first",
    scale: point.scale ?? 1,
    offset: point.offset ?? 0
  };
}

/** The priority of an OPC UA severity (1-1000) by the integration's bands. */
export function priorityOfOpcUaSeverity(severity: number, bands: OpcUaFields["severity_bands"]): Priority {
  const limits = {...PLC_DEFAULTS.severity_bands, ...bands};
  const order: Priority[] = ["critical", "high", "medium", "low"];
  return order.find((priority) => severity >= (limits[priority] ?? Infinity)) ?? "info";
}
