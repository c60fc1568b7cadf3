import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {UsmReplayGuard} from "../../../src/inbound/snmp/usm-replay-guard.js";
import type {UsmStamp} from "../../../src/inbound/snmp/trap-types.js";

const T0 = Date.UTC(2026, 10, 28, 8, 0, 0);
const OWN = {engineId: "8000b98305aa", boots: 220_000_000, startedAtMs: T0};
const ups = (boots: number, time: number, digest: string): UsmStamp => ({
  engineId: "80001f8880c0ffee",
  boots,
  time,
  digest
});

describe("the USM replay guard (RFC 3414 §3.2 step 7)", () => {
  it("learns a trap sender's engine from its first message and moves on with later ones", () => {
    const guard = new UsmReplayGuard(OWN);
    expect(guard.admit(ups(7, 1000, "a"), T0)).toBeNull();
    expect(guard.admit(ups(7, 1010, "b"), T0 + 10_000)).toBeNull();
    // Higher boots (the sender rebooted): a new notion, its time may be anything.
    expect(guard.admit(ups(8, 3, "c"), T0 + 20_000)).toBeNull();
  });

  it("refuses lower boots, a time more than 150 s behind the notion, and the same message twice", () => {
    const guard = new UsmReplayGuard(OWN);
    expect(guard.admit(ups(7, 1000, "a"), T0)).toBeNull();
    expect(guard.admit(ups(7, 1000, "a"), T0 + 1_000)).toBe("SNMPv3 replay: the same message was already taken");
    expect(guard.admit(ups(6, 5000, "old-boot"), T0)).toMatch(/engine boots 6, expected 7/);
    // 17 minutes later the notion is at 2020: a message stamped 1001 (captured then, never
    // delivered, so newer than the latest received) is refused, where RFC 3414 alone would take it...
    expect(guard.admit(ups(7, 1001, "captured"), T0 + 17 * 60_000)).toMatch(/outside the 150 s time window/);
    // ...while one stamped within 150 s of it passes.
    expect(guard.admit(ups(7, 1900, "fresh"), T0 + 17 * 60_000)).toBeNull();
  });

  it("checks an inform against the gateway's own engine both ways, and never learns it from a message", () => {
    const guard = new UsmReplayGuard(OWN);
    const own = (boots: number, time: number, digest: string) => ({engineId: OWN.engineId, boots, time, digest});
    expect(guard.admit(own(OWN.boots, 100, "a"), T0 + 100_000)).toBeNull();
    expect(guard.admit(own(OWN.boots, 400, "b"), T0 + 100_000)).toMatch(/outside the 150 s/);
    expect(guard.admit(own(OWN.boots + 1, 100, "c"), T0 + 100_000)).toMatch(/expected 220000000/);
    expect(guard.admit(own(OWN.boots, 100, "d"), T0 + 100_000)).toBeNull();
  });

  it("keeps its memory bounded: engines and digests beyond the limits are forgotten oldest first", () => {
    const guard = new UsmReplayGuard(OWN, {maxEngines: 3, maxDigestsPerEngine: 2});
    for (let engine = 0; engine < 10; engine++)
      expect(guard.admit({engineId: `e${engine}`, boots: 1, time: 10, digest: "x"}, T0)).toBeNull();
    expect(guard.engineCount()).toBe(3);
  });

  it("never admits one message twice, and never one behind the window, whatever the order (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            boots: fc.integer({min: 1, max: 3}),
            time: fc.integer({min: 0, max: 2000}),
            advanceS: fc.integer({min: 0, max: 400})
          }),
          {maxLength: 60}
        ),
        (messages) => {
          const guard = new UsmReplayGuard(OWN);
          const admitted = new Set<string>();
          let nowMs = T0;
          for (const {boots, time, advanceS} of messages) {
            nowMs += advanceS * 1000;
            const digest = `${boots}/${time}`;
            if (guard.admit(ups(boots, time, digest), nowMs) === null) {
              expect(admitted.has(digest)).toBe(false);
              admitted.add(digest);
            }
          }
        }
      )
    );
  });
});
