import {describe, expect, it} from "vitest";
import {ReconnectBackoff} from "../../src/lib/reconnect-backoff.js";

describe("a device link's reconnect back-off", () => {
  it("doubles from the first pause up to the cap per failure in a row, and starts again after a success", () => {
    const backoff = new ReconnectBackoff({firstMs: 1_000, maxMs: 30_000});
    expect(Array.from({length: 7}, () => backoff.failed())).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000
    ]);
    expect(backoff.failures).toBe(7);
    backoff.succeeded();
    expect(backoff.failures).toBe(0);
    expect(backoff.failed()).toBe(1_000);
  });

  it("stays at the cap through a long outage", () => {
    const backoff = new ReconnectBackoff({firstMs: 400, maxMs: 2_000});
    for (let failure = 0; failure < 2_000; failure++) backoff.failed();
    expect(backoff.failed()).toBe(2_000);
  });
});
