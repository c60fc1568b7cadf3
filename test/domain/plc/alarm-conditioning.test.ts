import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {
  ALARM_START,
  alarmLabel,
  alarmStep,
  alarmTitle,
  chatteringText,
  type AlarmEffect,
  type AlarmSpec,
  type AlarmState
} from "../../../src/domain/plc/alarm-conditioning.js";

const oilTemp: AlarmSpec = {
  when: ">",
  value: 80,
  deadband: 2,
  onDelaySeconds: 2,
  offDelaySeconds: 5,
  priority: "critical",
  title: "Press 7 oil {value} {unit}",
  chatterPerMinute: 6
};

interface Step {
  at: number;
  value: number | null;
  before: AlarmState;
  after: AlarmState;
  effects: AlarmEffect[];
}

/** Runs readings given as [milliseconds since the previous one, value] from the start state. */
function run(spec: AlarmSpec, readings: readonly (readonly [number, number | null])[]): Step[] {
  let state = ALARM_START;
  let at = 1_000_000;
  return readings.map(([gapMs, value]) => {
    at += gapMs;
    const {state: after, effects} = alarmStep(spec, state, {value, unit: "°C"}, at);
    const step = {at, value, before: state, after, effects};
    state = after;
    return step;
  });
}

const effectsOf = (steps: Step[]) => steps.flatMap((step) => step.effects.map((effect) => ({...effect, at: step.at})));

// Values around the limit and its deadband, so every region is visited often.
const value = fc.oneof(fc.integer({min: 70, max: 90}), fc.constantFrom(78, 80, 80.5, 82), fc.constant(null));
const readings = fc.array(fc.tuple(fc.integer({min: 1, max: 3000}), value), {maxLength: 120});
const spec = fc.record({
  deadband: fc.constantFrom(0, 0.5, 2, 5),
  onDelaySeconds: fc.integer({min: 0, max: 10}),
  offDelaySeconds: fc.integer({min: 0, max: 10}),
  chatterPerMinute: fc.integer({min: 1, max: 20})
});
const calmTail = Array.from({length: 200}, () => [1000, 60] as const);

describe("alarm conditioning", () => {
  it("fires once the limit has been passed for the whole on-delay, and resolves after the off-delay", () => {
    const steps = run(oilTemp, [
      [0, 75],
      [1000, 85],
      [1000, 86],
      [1000, 87],
      [1000, 79],
      [1000, 77],
      [3000, 77],
      [2000, 77]
    ]);
    expect(steps.map((step) => alarmLabel(step.after))).toEqual([
      "normal",
      "pending",
      "pending",
      "active",
      "active",
      "active",
      "active",
      "normal"
    ]);
    expect(effectsOf(steps)).toEqual([
      {kind: "fire", title: "Press 7 oil 87 °C", priority: "critical", chattering: false, at: 1_003_000},
      {kind: "resolve", at: 1_010_000}
    ]);
  });

  it("watches a bit of a word, an equality and a change of state", () => {
    const bit3: AlarmSpec = {...oilTemp, when: "bit", bit: 3, value: undefined, onDelaySeconds: 0, offDelaySeconds: 0};
    expect(
      effectsOf(
        run(bit3, [
          [0, 0b0111],
          [1000, 0b1000],
          [1000, 0b0100]
        ])
      ).map((e) => e.kind)
    ).toEqual(["fire", "resolve"]);
    const stopped: AlarmSpec = {...bit3, when: "==", value: 0};
    expect(
      effectsOf(
        run(stopped, [
          [0, 1],
          [1000, 0]
        ])
      ).map((e) => e.kind)
    ).toEqual(["fire"]);
    const changed: AlarmSpec = {...oilTemp, when: "change", onDelaySeconds: 30, offDelaySeconds: 2};
    const steps = run(changed, [
      [0, 1],
      [1000, 1],
      [1000, 2],
      [1000, 2],
      [2000, 2]
    ]);
    expect(effectsOf(steps).map((e) => [e.kind, e.at])).toEqual([
      ["fire", 1_002_000],
      ["resolve", 1_005_000]
    ]);
  });

  it("writes the value and unit into the title", () => {
    expect(alarmTitle("Press 7 oil {value} {unit}", 81.23456, "°C")).toBe("Press 7 oil 81.235 °C");
    expect(alarmTitle("{value} bar", null, "")).toBe("? bar");
  });

  it("never fires before the condition has held for the on-delay", () => {
    fc.assert(
      fc.property(spec, readings, (tuning, values) => {
        const alarm = {...oilTemp, ...tuning};
        const steps = run(alarm, values);
        for (const [index, step] of steps.entries()) {
          if (!step.effects.some((effect) => effect.kind === "fire" && !effect.chattering)) continue;
          // Every good reading inside the on-delay, and the one that started it, was beyond the limit's band.
          const window = steps
            .slice(0, index + 1)
            .filter((earlier) => earlier.value !== null && earlier.at >= step.at - alarm.onDelaySeconds * 1000);
          expect(window.every((earlier) => (earlier.value as number) > alarm.value! - alarm.deadband)).toBe(true);
          const started = steps
            .slice(0, index + 1)
            .findLast((earlier) => earlier.at <= step.at - alarm.onDelaySeconds * 1000 && earlier.value !== null);
          expect(started === undefined || (started.value as number) > alarm.value! - alarm.deadband).toBe(true);
          expect(step.after.changedAt! <= step.at - alarm.onDelaySeconds * 1000).toBe(true);
        }
      })
    );
  });

  it("a value inside the deadband never changes the condition", () => {
    fc.assert(
      fc.property(spec, readings, fc.double({min: 0, max: 0.99, noNaN: true}), (tuning, values, where) => {
        const alarm = {...oilTemp, ...tuning};
        const before = run(alarm, values).at(-1)?.after ?? ALARM_START;
        if (before.changedAt === null || alarm.deadband === 0) return;
        const inside = alarm.value! - alarm.deadband * where;
        const {state} = alarmStep(alarm, before, {value: inside, unit: ""}, 10_000_000);
        // At the limit itself a ">" is not passed: inside the band the condition stays as it was.
        expect(state.violating).toBe(inside > alarm.value! ? true : before.violating);
      })
    );
  });

  it("every fire is followed by at most one resolve, and a calm point ends resolved", () => {
    fc.assert(
      fc.property(spec, readings, (tuning, values) => {
        const steps = run({...oilTemp, ...tuning}, [...values, ...calmTail]);
        const kinds = effectsOf(steps)
          .map((effect) => effect.kind)
          .filter((kind) => kind !== "chattering");
        kinds.forEach((kind, index) => expect(kind).toBe(index % 2 === 0 ? "fire" : "resolve"));
        expect(kinds.length % 2).toBe(0);
        expect(alarmLabel(steps.at(-1)!.after)).toBe("normal");
      })
    );
  });

  it("a chattering point pages at most once per chatter episode, and its alert says it is chattering", () => {
    const flapping = fc.array(fc.tuple(fc.integer({min: 200, max: 4000}), fc.constantFrom(70, 90)), {
      minLength: 10,
      maxLength: 150
    });
    fc.assert(
      fc.property(spec, flapping, (tuning, values) => {
        const steps = run({...oilTemp, ...tuning}, values);
        let episodeFires = 0;
        for (const step of steps) {
          if (!step.before.chattering) episodeFires = 0;
          const told = step.effects.filter((effect) => effect.kind === "chattering");
          if (!step.before.chattering && step.after.chattering) {
            // The episode starts: a new alert pages once saying so, an open one is told instead of paged.
            const said = step.effects.filter(
              (effect) => effect.kind === "chattering" || (effect.kind === "fire" && effect.chattering)
            );
            expect(said).toHaveLength(1);
            if (step.before.fired) expect(said[0]).toEqual({kind: "chattering"});
            else expect(said[0]).toMatchObject({kind: "fire", title: expect.stringMatching(/ \(chattering\)$/)});
          } else expect(told).toEqual([]);
          if (step.after.chattering) {
            episodeFires += step.effects.filter((effect) => effect.kind === "fire").length;
            expect(episodeFires).toBeLessThanOrEqual(1);
            expect(step.effects.some((effect) => effect.kind === "resolve")).toBe(false);
          }
        }
      })
    );
  });

  it("shows a flapping point as chattering and pages it once", () => {
    const flapping = Array.from({length: 20}, (_, index) => [1000, index % 2 ? 90 : 70] as const);
    const steps = run({...oilTemp, onDelaySeconds: 3, offDelaySeconds: 3}, flapping);
    expect(alarmLabel(steps.at(-1)!.after)).toBe("chattering");
    expect(effectsOf(steps)).toEqual([
      expect.objectContaining({kind: "fire", chattering: true, title: "Press 7 oil 90 °C (chattering)"})
    ]);
  });

  it("tells an alert already paged that its point is now chattering, without paging again", () => {
    const paged = [[0, 90] as const, [1000, 90] as const];
    const flapping = Array.from({length: 20}, (_, index) => [1000, index % 2 ? 90 : 70] as const);
    const steps = run({...oilTemp, onDelaySeconds: 1, offDelaySeconds: 3}, [...paged, ...flapping]);
    expect(effectsOf(steps).map((effect) => effect.kind)).toEqual(["fire", "chattering"]);
    expect(chatteringText("Press 7 oil 90 °C")).toBe("Press 7 oil 90 °C (chattering)");
    expect(chatteringText("Press 7 oil 90 °C (chattering)")).toBe("Press 7 oil 90 °C (chattering)");
  });
});
