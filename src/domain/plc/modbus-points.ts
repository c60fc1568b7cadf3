/**
 * Modbus points, pure: which tables and types fit together, how a device's points are batched
 * into as few requests as possible, how registers become a value, and exception codes in words.
 */

export const MODBUS_TABLES = ["coil", "discrete_input", "holding_register", "input_register"] as const;
export type ModbusTable = (typeof MODBUS_TABLES)[number];

export const MODBUS_TYPES = ["bool", "int16", "uint16", "int32", "uint32", "float32"] as const;
export type ModbusType = (typeof MODBUS_TYPES)[number];

/** For 32-bit types: `high_first` (the Modbus convention, "ABCD") or `low_first` (word-swapped, "CDAB"). */
export const WORD_ORDERS = ["high_first", "low_first"] as const;
export type WordOrder = (typeof WORD_ORDERS)[number];

/** A point as the Modbus link reads it. */
export interface ModbusPoint {
  readonly name: string;
  readonly table: ModbusTable;
  /** The protocol address, 0-65535 (register 40101 of a manual is holding_register 100). */
  readonly address: number;
  readonly type: ModbusType;
  readonly wordOrder: WordOrder;
  readonly scale: number;
  readonly offset: number;
}

/** One read request: a table, where it starts, how many bits or registers, and the points it carries. */
export interface ModbusRead {
  readonly table: ModbusTable;
  readonly address: number;
  readonly count: number;
  readonly points: readonly ModbusPoint[];
}

const BIT_TABLES: readonly ModbusTable[] = ["coil", "discrete_input"];
// The protocol's limits per request (Modbus application protocol 1.1b3, 6.1-6.4).
const MAX_REGISTERS = 125;
const MAX_BITS = 2000;
const LAST_ADDRESS = 65_535;

export const isBitTable = (table: ModbusTable) => BIT_TABLES.includes(table);

/** Registers (or bits) a point takes. */
export function widthOf(type: ModbusType): number {
  return type === "int32" || type === "uint32" || type === "float32" ? 2 : 1;
}

/** What is wrong with a point's table, address and type, in words; null when they fit. */
export function modbusPointProblem(point: {table: ModbusTable; address: number; type: ModbusType}): string | null {
  if (isBitTable(point.table) && point.type !== "bool")
    return `a ${point.table} holds one bit: its type is bool (${point.type} needs a holding_register or input_register)`;
  if (!isBitTable(point.table) && point.type === "bool")
    return `a ${point.table} holds 16 bits: read it as int16 or uint16 and alarm on a bit ("when": "bit"), or use a coil or discrete_input`;
  const last = point.address + widthOf(point.type) - 1;
  if (point.address < 0 || last > LAST_ADDRESS)
    return `address out of range: a Modbus address is 0-${LAST_ADDRESS}${last > LAST_ADDRESS ? ` and a ${point.type} takes ${widthOf(point.type)} registers` : ""}`;
  return null;
}

/**
 * The reads that cover every point: per table, points at contiguous (or shared) addresses go in
 * one request up to the protocol's size limit. A gap starts a new request: reading across it
 * could touch an address the device does not have and fail the whole request.
 */
export function planReads(points: readonly ModbusPoint[]): ModbusRead[] {
  const reads: ModbusRead[] = [];
  for (const table of MODBUS_TABLES) {
    const max = isBitTable(table) ? MAX_BITS : MAX_REGISTERS;
    const sorted = points.filter((point) => point.table === table).sort((a, b) => a.address - b.address);
    let current: {address: number; end: number; points: ModbusPoint[]} | null = null;
    for (const point of sorted) {
      const end = point.address + widthOf(point.type);
      if (current && point.address <= current.end && Math.max(end, current.end) - current.address <= max) {
        current.end = Math.max(end, current.end);
        current.points.push(point);
        continue;
      }
      if (current)
        reads.push({table, address: current.address, count: current.end - current.address, points: current.points});
      current = {address: point.address, end, points: [point]};
    }
    if (current)
      reads.push({table, address: current.address, count: current.end - current.address, points: current.points});
  }
  return reads;
}

/** A point's raw number out of a read's registers (or its bit as 1/0), before scale and offset. */
export function rawValue(point: ModbusPoint, read: ModbusRead, data: readonly (number | boolean)[]): number {
  const at = point.address - read.address;
  if (point.type === "bool") return data[at] ? 1 : 0;
  const first = Number(data[at]) & 0xffff;
  if (point.type === "uint16") return first;
  if (point.type === "int16") return (first << 16) >> 16;
  const second = Number(data[at + 1]) & 0xffff;
  const [high, low] = point.wordOrder === "high_first" ? [first, second] : [second, first];
  const view = new DataView(new ArrayBuffer(4));
  view.setUint16(0, high);
  view.setUint16(2, low);
  if (point.type === "uint32") return view.getUint32(0);
  if (point.type === "int32") return view.getInt32(0);
  return view.getFloat32(0);
}

/** The point's value: a bool stays true/false; a number is scaled and offset. NaN (a float32 "no value") stays NaN. */
export function pointValue(point: ModbusPoint, raw: number): number | boolean {
  if (point.type === "bool") return raw === 1;
  return raw * point.scale + point.offset;
}

const EXCEPTIONS: Record<number, string> = {
  1: "illegal function (the device does not offer this read for the table)",
  2: "illegal data address (the device has no such address)",
  3: "illegal data value (the request's size is not accepted)",
  4: "server device failure",
  5: "acknowledge (the device is busy with a long command)",
  6: "server device busy",
  8: "memory parity error",
  10: "gateway path unavailable (the gateway has no route to the unit id)",
  11: "gateway target device failed to respond (nothing answers at this unit id behind the gateway)"
};

/** A Modbus exception code in words. */
export function modbusExceptionText(code: number): string {
  return `Modbus exception ${code}: ${EXCEPTIONS[code] ?? "unknown exception"}`;
}
