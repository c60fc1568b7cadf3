import {describe, expect, it} from "vitest";
import {LineLock} from "../../src/modem/line-lock.js";

describe("LineLock background work", () => {
  it("does not run while the line is held, and runs once it is free", async () => {
    const lock = new LineLock();
    const release = await lock.acquire();
    let ran = false;
    const work = () => {
      ran = true;
      return Promise.resolve();
    };
    expect(await lock.ifIdle(work)).toBe(false);
    expect(ran).toBe(false);
    release();
    expect(await lock.ifIdle(work)).toBe(true);
    expect(ran).toBe(true);
    expect(lock.busy).toBe(false);
  });

  it("is told the line is wanted as soon as someone asks, and hands it over when it returns", async () => {
    const lock = new LineLock();
    const order: string[] = [];
    let finishStep!: () => void;
    const step = new Promise<void>((resolve) => (finishStep = resolve));
    let started!: (wanted: AbortSignal) => void;
    const running = new Promise<AbortSignal>((resolve) => (started = resolve));
    const background = lock.ifIdle(async (wanted) => {
      started(wanted);
      order.push("step 1");
      await step;
      if (!wanted.aborted) order.push("step 2");
    });
    const wanted = await running;
    expect(wanted.aborted).toBe(false);
    const call = lock.acquire().then((release) => {
      order.push("call");
      release();
    });
    expect(wanted.aborted).toBe(true);
    finishStep();
    await Promise.all([background, call]);
    expect(order).toEqual(["step 1", "call"]);
  });
});
