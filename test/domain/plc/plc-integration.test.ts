import {describe, expect, it} from "vitest";
import {alarmSpecOf, priorityOfOpcUaSeverity} from "../../../src/domain/plc/plc-integration.js";

describe("a PLC integration's settings", () => {
  it("maps an OPC UA severity to a priority by the default bands, or the integration's own", () => {
    expect([1000, 800, 799, 600, 400, 200, 199, 1].map((severity) => priorityOfOpcUaSeverity(severity, {}))).toEqual([
      "critical",
      "critical",
      "high",
      "high",
      "medium",
      "low",
      "info",
      "info"
    ]);
    const bands = {critical: 900, low: 100};
    expect([850, 150, 99].map((severity) => priorityOfOpcUaSeverity(severity, bands))).toEqual(["high", "low", "info"]);
  });

  it("fills a point's alarm with its defaults", () => {
    expect(alarmSpecOf({name: "oil_temp"}, {when: ">", value: 80}, "high")).toEqual({
      when: ">",
      value: 80,
      bit: undefined,
      deadband: 0,
      onDelaySeconds: 0,
      offDelaySeconds: 0,
      priority: "high",
      title: "oil_temp {value} {unit}",
      chatterPerMinute: 10
    });
  });
});
