import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {validPlcEvent} from "../../../../src/services/integrations/plc-worker/plc-worker-protocol.js";

// The PLC link worker is as untrusted as the devices it reads (design rule 14): whatever it sends,
// the gateway's thread takes only well-formed events, strings cut short, numbers finite.
const hostile = fc.record(
  {
    type: fc.constantFrom("reading", "link", "alarm", "answer", "log", "serial", "other"),
    op: fc.constantFrom("open", "write", "close", "format"),
    port: fc.oneof(fc.integer(), fc.double()),
    path: fc.oneof(fc.string(), fc.string({minLength: 5_000, maxLength: 6_000})),
    baudRate: fc.oneof(fc.integer(), fc.double()),
    parity: fc.constantFrom("none", "even", "odd", "mark"),
    stopBits: fc.integer({min: 0, max: 3}),
    data: fc.oneof(fc.uint8Array({maxLength: 300}), fc.anything()),
    id: fc.oneof(fc.string(), fc.string({minLength: 2_000, maxLength: 3_000}), fc.anything()),
    point: fc.oneof(fc.string(), fc.anything()),
    value: fc.oneof(fc.double(), fc.boolean(), fc.constant(null), fc.anything()),
    quality: fc.constantFrom("good", "bad", "uncertain", "excellent"),
    readAt: fc.oneof(fc.double(), fc.integer({min: 0, max: 2e12})),
    state: fc.constantFrom("connected", "unreachable", "on fire"),
    error: fc.oneof(fc.string({maxLength: 5_000}), fc.constant(null), fc.anything()),
    conditionId: fc.string(),
    active: fc.oneof(fc.boolean(), fc.anything()),
    acknowledged: fc.boolean(),
    severity: fc.oneof(fc.double(), fc.integer()),
    message: fc.oneof(fc.string({maxLength: 5_000}), fc.anything()),
    source: fc.string(),
    time: fc.oneof(fc.double(), fc.integer({min: 0, max: 2e12})),
    request: fc.oneof(fc.integer(), fc.double()),
    level: fc.constantFrom("debug", "info", "warn", "error", "fatal"),
    fields: fc.anything()
  },
  {requiredKeys: ["type"]}
);

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null || value instanceof Date) return [];
  return Object.values(value).flatMap(strings);
}

function numbers(value: unknown): number[] {
  if (typeof value === "number") return [value];
  if (typeof value !== "object" || value === null || value instanceof Date || value instanceof Uint8Array) return [];
  return Object.values(value).flatMap(numbers);
}

describe("events from the PLC link worker", () => {
  it("are taken only well formed, with bounded strings, finite numbers and valid times", () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.anything()), (raw) => {
        const event = validPlcEvent(raw);
        if (!event) return;
        const limit = event.type === "serial" ? 4_099 : 1_003;
        for (const text of strings(event)) expect(text.length).toBeLessThanOrEqual(limit);
        if (event.type === "serial" && event.op === "write") expect(event.data.length).toBeLessThanOrEqual(256);
        if (event.type === "serial" && event.op === "open") expect([1, 2]).toContain(event.open.stopBits);
        for (const number of numbers(event)) expect(Number.isFinite(number)).toBe(true);
        if (event.type === "alarm") expect(event.alarm.severity).toBeGreaterThanOrEqual(1);
        if (event.type === "reading") expect(Number.isNaN(event.reading.readAt.getTime())).toBe(false);
      }),
      {numRuns: 2_000}
    );
  });

  it("takes a device's long alarm message cut short, and refuses a reading that is NaN", () => {
    const alarm = validPlcEvent({
      type: "alarm",
      id: "int_1",
      conditionId: "ns=2;s=Boiler.High",
      active: true,
      acknowledged: false,
      severity: 5_000,
      message: "x".repeat(1_000_000),
      source: "Boiler",
      time: Date.now()
    });
    expect(alarm?.type === "alarm" && alarm.alarm.message.length).toBe(1_003);
    expect(alarm?.type === "alarm" && alarm.alarm.severity).toBe(1_000);
    // Who acknowledged at the SCADA travels with it (acknowledged_by names them); a non-text one is dropped.
    const acked = {type: "alarm", id: "int_1", conditionId: "c", active: true, acknowledged: true, severity: 500};
    const at = {message: "m", source: "s", time: Date.now()};
    expect(validPlcEvent({...acked, ...at, acknowledgedBy: "jwagner", comment: "seen"})).toMatchObject({
      alarm: {acknowledgedBy: "jwagner", comment: "seen"}
    });
    expect(validPlcEvent({...acked, ...at, acknowledgedBy: {}})).toMatchObject({alarm: {acknowledgedBy: undefined}});
    const reading = {type: "reading", id: "int_1", point: "p", quality: "good", readAt: Date.now()};
    expect(validPlcEvent({...reading, value: Number.NaN})).toBeNull();
    expect(validPlcEvent({...reading, value: 7})).toMatchObject({reading: {value: 7}});
  });
});
