import {afterEach, describe, expect, it} from "vitest";
import {ConnectivityProbe, probeDelayMs, type LinkObservation} from "../../src/channels/connectivity.js";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const probes: ConnectivityProbe[] = [];
afterEach(async () => {
  for (const probe of probes.splice(0)) await probe.stop();
});

/** A probe whose check answers from a script, on a manual clock; tests call tick() themselves. */
function scriptedProbe(...answers: LinkObservation[]) {
  const clock = new ManualClock(T0);
  const lines: string[] = [];
  const probe = new ConnectivityProbe({
    name: "the Telegram Bot API",
    check: () => Promise.resolve(answers.shift() ?? {ok: true}),
    intervalMs: 30_000,
    maxBackoffMs: 120_000,
    clock,
    logger: createLogger("debug", (line) => lines.push(line))
  });
  probes.push(probe);
  return {probe, clock, messages: () => lines.map((line) => JSON.parse(line).msg as string)};
}

const down: LinkObservation = {ok: false, state: "offline", error: "Telegram getMe: connect ECONNREFUSED"};

describe("connectivity probe", () => {
  it("probes at the interval while the link works, and backs off by doubling up to the cap while it does not", () => {
    expect([0, 1, 2, 3, 4, 5].map((failures) => probeDelayMs(failures, 30_000, 120_000))).toEqual([
      30_000, 30_000, 60_000, 120_000, 120_000, 120_000
    ]);
    // A cap below the interval never makes a failing link probed more often than a working one.
    expect(probeDelayMs(3, 30_000, 10_000)).toBe(30_000);
  });

  it("counts as usable before its first answer, then follows what it sees, logging only the changes", async () => {
    const {probe, clock, messages} = scriptedProbe(down, down, {ok: true});
    expect(probe.unavailableReason()).toBeNull();
    expect(probe.snapshot.state).toBe("unknown");

    await probe.tick();
    expect(probe.isOffline).toBe(true);
    expect(probe.unavailableReason()).toBe(
      `the Telegram Bot API is unreachable since ${new Date(T0).toISOString()} (Telegram getMe: connect ECONNREFUSED)`
    );
    clock.advance(30_000);
    await probe.tick();
    expect(probe.snapshot).toMatchObject({
      state: "offline",
      since: new Date(T0).toISOString(),
      last_checked_at: new Date(T0 + 30_000).toISOString()
    });

    clock.advance(60_000);
    await probe.tick();
    expect(probe.snapshot).toMatchObject({
      state: "online",
      since: new Date(T0 + 90_000).toISOString(),
      last_error: "Telegram getMe: connect ECONNREFUSED"
    });
    expect(probe.unavailableReason()).toBeNull();
    expect(messages()).toEqual(["the Telegram Bot API is offline", "the Telegram Bot API is reachable"]);
  });

  it("a refused token is its own state: the service answers, but waiting will not help", async () => {
    const {probe} = scriptedProbe({ok: false, state: "refused", error: "Telegram getMe: 401 Unauthorized"});
    await probe.tick();
    expect(probe.isOffline).toBe(false);
    expect(probe.unavailableReason()).toMatch(
      /^the Telegram Bot API refuses this gateway since .* \(Telegram getMe: 401 Unauthorized\)$/
    );
  });

  it("real calls report too, and every success is heard by the listeners", () => {
    const {probe} = scriptedProbe();
    let heard = 0;
    probe.onSuccess(() => heard++);
    probe.observe(down);
    expect(probe.isOffline).toBe(true);
    probe.observe({ok: true});
    probe.observe({ok: true});
    expect(probe.isOffline).toBe(false);
    expect(heard).toBe(2);
  });

  it("aims its next probe by the backoff once started", async () => {
    const {probe, clock} = scriptedProbe(down, down);
    probe.start();
    // Joins the probe the start began: one at a time.
    await probe.tick();
    expect(probe.snapshot.next_check_at).toBe(new Date(clock.now() + 30_000).toISOString());
    await probe.tick();
    // Two failures: the next probe waits twice the interval.
    expect(probe.snapshot.next_check_at).toBe(new Date(clock.now() + 60_000).toISOString());
  });
});
