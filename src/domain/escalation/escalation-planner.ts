import type {PolicySnapshot} from "../policy.js";
import type {Channel} from "../vocabulary.js";
import {countSteps, stepSlots, type StepSlot} from "./escalation-steps.js";
import {quietHoursEnd} from "./quiet-hours.js";

/** Where a notification's escalation stands: the journal's escalations row, times in ms. */
export interface EscalationState {
  /** Steps begun so far, which is also the 0-based index of the next step to run. */
  step: number;
  steps_total: number;
  /** Bumped whenever the schedule changes, so a wake-up carrying an older one is stale. */
  generation: number;
  /** When the stored wake-up is due (ms since the epoch); null once nothing is scheduled. */
  next_step_at: number | null;
  status: "running" | "stopped" | "exhausted";
}

/** What happened to an escalation: a stored wake-up fired, or the notification was closed. */
export type EscalationEvent = {type: "wake"; generation: number} | {type: "acknowledged"} | {type: "resolved"};

/**
 * What the runner must do, as data, in order. `attempt` starts a contact; `skip` records a
 * contact not made (outcome `skipped`, with the reason, and the contact it would have used when
 * the policy has one); `hold` says a step waits for quiet
 * hours to end; `wake_at` stores the next wake-up; `emit` publishes an event.
 */
export type EscalationEffect =
  | {type: "attempt"; step: number; recipient_uuid: string; channel: Channel; contact: string}
  | {type: "skip"; step: number; recipient_uuid: string; channel: Channel; reason: string; contact: string | null}
  | {type: "hold"; step: number; until: number}
  | {type: "wake_at"; at: number; generation: number}
  | {type: "emit"; event: "escalation.step"; step: number}
  | {type: "emit"; event: "escalation.exhausted"};

/** What the planner needs besides the state: the frozen policy and which channels work now. */
export interface EscalationContext {
  policy: PolicySnapshot;
  /** Why the channel cannot be used for this recipient right now, or null when it can. */
  channelUnavailable(channel: Channel, recipientUuid: string): string | null;
}

/** The result of one event: the state to store and the effects to carry out with it. */
export interface EscalationTransition {
  state: EscalationState;
  effects: EscalationEffect[];
}

/** The state stored at accept time: step 0 is due at once, under generation 0. */
export function startEscalation(policy: PolicySnapshot, now: number): EscalationState {
  return {step: 0, steps_total: countSteps(policy), generation: 0, next_step_at: now, status: "running"};
}

/**
 * Applies one event at `now`. A wake-up runs the due step: its contacts are attempted, skipped
 * (channel unavailable: the chain then moves on at once, within this same call) or held for quiet
 * hours; after a step with attempts the next wake-up is now + the ack timeout. A wake-up once
 * every step has run exhausts the chain. Acknowledge and resolve stop it with no effects.
 * Stale (older generation), early (before next_step_at) or late (chain no longer running)
 * events change nothing, which makes duplicate deliveries harmless.
 */
export function advance(state: EscalationState, event: EscalationEvent, now: number, ctx: EscalationContext): EscalationTransition {
  const unchanged = {state, effects: []};
  if (state.status !== "running") return unchanged;
  if (event.type !== "wake") {
    return {state: {...state, status: "stopped", next_step_at: null, generation: state.generation + 1}, effects: []};
  }
  if (event.generation !== state.generation) return unchanged;
  if (state.next_step_at !== null && now < state.next_step_at) return unchanged;
  return runDueSteps(state, now, ctx);
}

function runDueSteps(state: EscalationState, now: number, ctx: EscalationContext): EscalationTransition {
  const generation = state.generation + 1;
  const effects: EscalationEffect[] = [];
  for (let step = state.step; step < state.steps_total; step++) {
    const outcome = runStep(step, now, ctx);
    if (outcome.kind === "held") {
      effects.push({type: "hold", step, until: outcome.until}, {type: "wake_at", at: outcome.until, generation});
      return {state: {...state, step, generation, next_step_at: outcome.until}, effects};
    }
    effects.push(...outcome.effects, {type: "emit", event: "escalation.step", step});
    if (outcome.ackTimeoutSeconds !== null) {
      const at = now + outcome.ackTimeoutSeconds * 1000;
      effects.push({type: "wake_at", at, generation});
      return {state: {...state, step: step + 1, generation, next_step_at: at}, effects};
    }
  }
  effects.push({type: "emit", event: "escalation.exhausted"});
  return {state: {...state, step: state.steps_total, generation, next_step_at: null, status: "exhausted"}, effects};
}

type StepOutcome = {kind: "ran"; effects: EscalationEffect[]; ackTimeoutSeconds: number | null} | {kind: "held"; until: number};

type Decision =
  | {kind: "attempt"; slot: StepSlot; contact: string}
  | {kind: "skip"; slot: StepSlot; reason: string}
  | {kind: "quiet"; slot: StepSlot; until: number};

/**
 * Runs one step. A contact in quiet hours holds the step only when nobody else in it can be
 * paged now: in a parallel step the awake members are paged and the sleeping ones recorded as
 * skipped, because waiting for one member's night to end would leave the whole group unpaged.
 */
function runStep(step: number, now: number, ctx: EscalationContext): StepOutcome {
  const decisions = stepSlots(ctx.policy, step).map((slot) => decide(slot, now, ctx));
  const attempted = decisions.filter((decision) => decision.kind === "attempt");
  const quiet = decisions.flatMap((decision) => (decision.kind === "quiet" ? [decision.until] : []));
  if (attempted.length === 0 && quiet.length > 0) return {kind: "held", until: Math.min(...quiet)};
  const effects = decisions.map((decision): EscalationEffect => {
    const who = {step, recipient_uuid: decision.slot.member.recipient_uuid, channel: decision.slot.channel};
    if (decision.kind === "attempt") return {type: "attempt", ...who, contact: decision.contact};
    const contact = decision.slot.member.contacts[decision.slot.channel] ?? null;
    if (decision.kind === "skip") return {type: "skip", ...who, reason: decision.reason, contact};
    return {type: "skip", ...who, reason: `quiet hours until ${new Date(decision.until).toISOString()}`, contact};
  });
  // For a parallel step the longest timeout wins, so every member paged gets their full time to answer.
  const ackTimeoutSeconds = attempted.length > 0 ? Math.max(...attempted.map((decision) => decision.slot.member.ack_timeout_seconds)) : null;
  return {kind: "ran", effects, ackTimeoutSeconds};
}

// Availability is checked before quiet hours: a channel that cannot be used is skipped now
// rather than after a night of waiting, and the chain moves on to one that can.
function decide(slot: StepSlot, now: number, ctx: EscalationContext): Decision {
  const {member, channel} = slot;
  const unavailable = ctx.channelUnavailable(channel, member.recipient_uuid);
  if (unavailable !== null) return {kind: "skip", slot, reason: unavailable};
  const contact = member.contacts[channel];
  if (!contact) return {kind: "skip", slot, reason: `no ${channel} contact in the policy snapshot`};
  const quiet = member.quiet_hours;
  if (quiet && !quiet.allow_priorities.includes(ctx.policy.priority)) {
    const until = quietHoursEnd(quiet, now);
    if (until !== null) return {kind: "quiet", slot, until};
  }
  return {kind: "attempt", slot, contact};
}
