import {describe, expect, it} from "vitest";
import {SerialByKey} from "../../src/lib/serial-by-key.js";

const later = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("SerialByKey.runAll", () => {
  it("runs work naming a key after earlier work under any of its keys, and other keys freely", async () => {
    const serial = new SerialByKey();
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`${name} start`);
      await later();
      log.push(`${name} end`);
    };
    await Promise.all([
      serial.runAll(["a"], job("a1")),
      serial.runAll(["b", "a"], job("ab")),
      serial.runAll(["c"], job("c1")),
      serial.runAll(["a", "b"], job("ba"))
    ]);
    expect(log.indexOf("ab start")).toBeGreaterThan(log.indexOf("a1 end"));
    expect(log.indexOf("ba start")).toBeGreaterThan(log.indexOf("ab end"));
    // c runs beside a1: it waits for nobody.
    expect(log.indexOf("c1 start")).toBeLessThan(log.indexOf("a1 end"));
  });

  it("goes on after a failure under the same key", async () => {
    const serial = new SerialByKey();
    await expect(serial.runAll(["k"], () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(serial.runAll(["k"], () => Promise.resolve(3))).resolves.toBe(3);
  });
});
