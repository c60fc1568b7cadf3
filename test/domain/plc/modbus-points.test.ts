import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {
  MODBUS_TABLES,
  modbusExceptionText,
  modbusPointProblem,
  planReads,
  pointValue,
  rawValue,
  widthOf,
  type ModbusPoint,
  type ModbusTable,
  type ModbusType
} from "../../../src/domain/plc/modbus-points.js";

const registerPoint = (address: number, type: ModbusType = "uint16", table: ModbusTable = "holding_register") => ({
  name: `${table}-${address}-${type}`,
  table,
  address,
  type,
  wordOrder: "high_first" as const,
  scale: 1,
  offset: 0
});

const point = fc
  .record({
    table: fc.constantFrom(...MODBUS_TABLES),
    address: fc.integer({min: 0, max: 400}),
    wide: fc.boolean()
  })
  .map(({table, address, wide}): ModbusPoint => {
    const bits = table === "coil" || table === "discrete_input";
    return registerPoint(address, bits ? "bool" : wide ? "float32" : "int16", table);
  });

describe("Modbus points", () => {
  it("batches contiguous addresses into one request and starts a new one at a gap", () => {
    const reads = planReads([
      registerPoint(100),
      registerPoint(101, "float32"),
      registerPoint(103),
      registerPoint(110)
    ]);
    expect(reads.map(({table, address, count}) => [table, address, count])).toEqual([
      ["holding_register", 100, 4],
      ["holding_register", 110, 1]
    ]);
  });

  it("reads every point exactly once, within the protocol's size limits, never across a gap", () => {
    fc.assert(
      fc.property(fc.array(point, {maxLength: 300}), (points) => {
        const reads = planReads(points);
        expect(reads.flatMap((read) => read.points)).toHaveLength(points.length);
        for (const read of reads) {
          const bits = read.table === "coil" || read.table === "discrete_input";
          expect(read.count).toBeLessThanOrEqual(bits ? 2000 : 125);
          const covered = new Set<number>();
          for (const each of read.points) {
            expect(each.table).toBe(read.table);
            expect(each.address).toBeGreaterThanOrEqual(read.address);
            expect(each.address + widthOf(each.type)).toBeLessThanOrEqual(read.address + read.count);
            for (let at = each.address; at < each.address + widthOf(each.type); at++) covered.add(at);
          }
          // No address inside a request that no point asked for: the device may not have it.
          expect(covered.size).toBe(read.count);
        }
      })
    );
  });

  it("decodes signed, 32-bit and float values in either word order, then scales them", () => {
    const read = {table: "holding_register" as const, address: 10, count: 2, points: []};
    const float = new DataView(new ArrayBuffer(4));
    float.setFloat32(0, 81.5);
    const [high, low] = [float.getUint16(0), float.getUint16(2)];
    expect(rawValue({...registerPoint(10, "float32")}, read, [high, low])).toBe(81.5);
    expect(rawValue({...registerPoint(10, "float32"), wordOrder: "low_first"}, read, [low, high])).toBe(81.5);
    expect(rawValue(registerPoint(10, "int16"), read, [0xfffe])).toBe(-2);
    expect(rawValue(registerPoint(10, "uint32"), read, [0x0001, 0x0002])).toBe(65_538);
    expect(rawValue(registerPoint(10, "int32"), read, [0xffff, 0xfffe])).toBe(-2);
    expect(pointValue({...registerPoint(10), scale: 0.1, offset: -40}, 1234)).toBeCloseTo(83.4);
  });

  it("says in words what does not fit", () => {
    expect(modbusPointProblem({table: "coil", address: 1, type: "uint16"})).toContain("a coil holds one bit");
    expect(modbusPointProblem({table: "input_register", address: 2, type: "bool"})).toContain("holds 16 bits");
    expect(modbusPointProblem({table: "holding_register", address: 65_535, type: "float32"})).toContain(
      "address out of range"
    );
    expect(modbusPointProblem({table: "holding_register", address: 65_535, type: "uint16"})).toBeNull();
    expect(modbusExceptionText(2)).toBe("Modbus exception 2: illegal data address (the device has no such address)");
  });
});
