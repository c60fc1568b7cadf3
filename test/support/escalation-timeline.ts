import {expect} from "vitest";
import {
  advance,
  startEscalation,
  type EscalationContext,
  type EscalationEffect,
  type EscalationEvent
} from "../../src/domain/escalation/escalation-planner.js";
import type {PolicySnapshot} from "../../src/domain/policy.js";

const iso = (ms: number): string => new Date(ms).toISOString();
export const at = (text: string): number => Date.parse(text);

/** Unavailable channels as "uuid/channel" -> reason. */
type Outages = Record<string, string>;

export function context(policy: PolicySnapshot, outages: Outages = {}): EscalationContext {
  return {policy, channelUnavailable: (channel, recipientUuid) => outages[`${recipientUuid}/${channel}`] ?? null};
}

export function render(effect: EscalationEffect): string {
  switch (effect.type) {
    case "attempt":
      return `attempt #${effect.step} ${effect.recipient_uuid} ${effect.channel}`;
    case "skip":
      return `skip #${effect.step} ${effect.recipient_uuid} ${effect.channel}: ${effect.reason}`;
    case "defer":
      return `defer #${effect.step} ${effect.recipient_uuid} ${effect.channel} until ${iso(effect.until)}`;
    case "wake_at":
      return `wake_at ${iso(effect.at)} gen ${effect.generation}`;
    case "step":
      return `step #${effect.step}`;
    case "level":
      return `level ${effect.level} run ${effect.run}`;
    case "exhausted":
      return "exhausted";
  }
}

/**
 * Plays the runner: starts the chain at `start`, fires every stored wake-up exactly when due and
 * acknowledges at `ackAt`, until nothing is scheduled or the chain waits for a channel that, in
 * these scripted outages, never comes back. One "<time> <effect>" line per effect.
 */
export function timeline(
  policy: PolicySnapshot,
  start: string,
  options: {ackAt?: string; outages?: Outages} = {}
): string[] {
  const ctx = context(policy, options.outages);
  const ackAt = options.ackAt === undefined ? null : at(options.ackAt);
  let state = startEscalation(policy, at(start));
  const lines: string[] = [];
  while (state.next_step_at !== null) {
    const now = ackAt !== null && ackAt <= state.next_step_at ? ackAt : state.next_step_at;
    const event: EscalationEvent =
      now === ackAt ? {type: "acknowledged"} : {type: "wake", generation: state.generation};
    const result = advance(state, event, now, ctx);
    if (event.type === "acknowledged")
      lines.push(`${iso(now)} acknowledged: ${result.state.status}, ${result.effects.length} effects`);
    const lookedAgainOnly = state.waiting_for !== null && result.effects.every((effect) => effect.type === "wake_at");
    if (lookedAgainOnly) {
      lines.push(
        `${iso(now)} still waiting for ${result.state.waiting_for?.map((wait) => wait.channel ?? wait.reason).join(", ")}`
      );
      break;
    }
    lines.push(...result.effects.map((effect) => `${iso(now)} ${render(effect)}`));
    state = result.state;
  }
  return lines;
}

/** One row of a timeline table: the case's name, the play, the lines it must produce. */
export type TimelineRow = [string, () => string[], string[]];

export function expectTimeline(...[, run, expected]: TimelineRow): void {
  expect(run()).toEqual(expected);
}
