import {describe, expect, it} from "vitest";
import {
  advance,
  startEscalation,
  type EscalationEvent,
  type EscalationState
} from "../../src/domain/escalation/escalation-planner.js";
import {member, snapshot} from "../support/escalation-fixtures.js";
import {at, context, render} from "../support/escalation-timeline.js";

describe("escalation planner", () => {
  describe("handles events out of turn", () => {
    const policy = snapshot("sequential", [member("alice", ["voice_call", "sms"], {repeat: 0})]);
    const ctx = context(policy);
    const t0 = at("2026-01-15T10:00:00.000Z");
    const afterFirstStep = advance(startEscalation(policy, t0), {type: "wake", generation: 0}, t0, ctx).state;

    it("starts with step 0 due at once under generation 0", () => {
      expect(startEscalation(policy, t0)).toEqual({
        steps_total: 2,
        generation: 0,
        next_step_at: t0,
        status: "running",
        progress: {carried: [], current: null, noted: {}},
        waiting_for: null
      });
    });

    it("records the attempt with the contact from the snapshot and moves to the next step", () => {
      const result = advance(startEscalation(policy, t0), {type: "wake", generation: 0}, t0, ctx);
      expect(result.effects[0]).toEqual({
        type: "attempt",
        step: 0,
        recipient_uuid: "alice",
        channel: "voice_call",
        contact: "+49-alice"
      });
      expect(result.state).toEqual({
        steps_total: 2,
        generation: 1,
        next_step_at: at("2026-01-15T10:02:00.000Z"),
        status: "running",
        progress: {carried: [0], current: 0, noted: {}},
        waiting_for: null
      });
    });

    it("does nothing for a wake-up with a stale generation", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 0}, at("2026-01-15T10:02:00.000Z"), ctx);
      expect(result).toEqual({state: afterFirstStep, effects: []});
    });

    it("does nothing for a wake-up that fires before the step is due", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 1}, at("2026-01-15T10:01:59.999Z"), ctx);
      expect(result).toEqual({state: afterFirstStep, effects: []});
    });

    it("runs a late wake-up and times the next step from when it ran", () => {
      const result = advance(afterFirstStep, {type: "wake", generation: 1}, at("2026-01-15T10:30:00.000Z"), ctx);
      expect(result.effects.map(render)).toEqual([
        "attempt #1 alice sms",
        "step #1",
        "wake_at 2026-01-15T10:32:00.000Z gen 2"
      ]);
    });

    const stops: [string, EscalationEvent][] = [
      ["acknowledged", {type: "acknowledged"}],
      ["resolved", {type: "resolved"}]
    ];
    it.each(stops)("stops with no effects when %s, and later wake-ups do nothing", (_name, event) => {
      const stopped = advance(afterFirstStep, event, at("2026-01-15T10:01:00.000Z"), ctx);
      expect(stopped).toEqual({
        state: {...afterFirstStep, generation: 2, next_step_at: null, status: "stopped"},
        effects: []
      });
      for (const generation of [1, 2]) {
        expect(advance(stopped.state, {type: "wake", generation}, at("2026-01-15T10:02:00.000Z"), ctx)).toEqual({
          state: stopped.state,
          effects: []
        });
      }
    });

    it("keeps an exhausted chain exhausted when it is acknowledged afterwards", () => {
      const exhausted: EscalationState = {
        steps_total: 2,
        generation: 3,
        next_step_at: null,
        status: "exhausted",
        progress: {carried: [0, 1], current: 1, noted: {}},
        waiting_for: null
      };
      expect(advance(exhausted, {type: "acknowledged"}, at("2026-01-15T11:00:00.000Z"), ctx)).toEqual({
        state: exhausted,
        effects: []
      });
    });

    it("exhausts when the last step's ack timeout passes", () => {
      const lastStepRun = advance(
        afterFirstStep,
        {type: "wake", generation: 1},
        at("2026-01-15T10:02:00.000Z"),
        ctx
      ).state;
      const result = advance(lastStepRun, {type: "wake", generation: 2}, at("2026-01-15T10:04:00.000Z"), ctx);
      expect(result).toEqual({
        state: {...lastStepRun, generation: 3, next_step_at: null, status: "exhausted"},
        effects: [{type: "exhausted"}]
      });
    });
  });
});
