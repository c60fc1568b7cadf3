import type {EscalationProgress, WaitReason} from "../notification.js";
import {leftOutChannels, type PolicySnapshot} from "../policy.js";
import {emptyPlanReason} from "../plan-coverage.js";
import type {Channel} from "../vocabulary.js";
import {countSteps, levelOf, stepSlots, stepWaitSeconds, type StepSlot} from "./escalation-steps.js";
import {quietHoursEnd} from "./quiet-hours.js";

/** A chain waiting for a channel looks again at least this often, whatever it is told. */
export const WAIT_RETRY_MS = 60_000;

/** Where a notification's escalation stands: the journal's escalations row, times in ms. */
export interface EscalationState {
  steps_total: number;
  /** Bumped whenever the schedule changes, so a wake-up carrying an older one is stale. */
  generation: number;
  /** When the stored wake-up is due (ms since the epoch); null once nothing is scheduled. */
  next_step_at: number | null;
  status: "running" | "stopped" | "exhausted";
  progress: EscalationProgress;
  /** Set while no remaining step can be carried because its channels cannot be used now. */
  waiting_for: WaitReason[] | null;
}

/** What happened to an escalation: a stored wake-up fired, or the notification was closed. */
export type EscalationEvent = {type: "wake"; generation: number} | {type: "acknowledged"} | {type: "resolved"};

interface Contact {
  step: number;
  recipient_uuid: string;
  channel: Channel;
}

/**
 * What the runner must do, as data, in causal order. `attempt` hands a contact to its channel;
 * `skip` records a contact the channel could not make now (outcome `skipped`, with the reason
 * and the address it would have used); `defer` records a contact held for quiet hours (outcome
 * `deferred`, tried at `until` if still due); `step` announces a carried step (0-based here),
 * preceded by `level` (numbered from 1) when it starts a level of an escalation policy;
 * `exhausted` the end of a chain whose every step was carried; `wake_at` stores the next wake-up.
 */
export type EscalationEffect =
  | (Contact & {type: "attempt"; contact: string})
  | (Contact & {type: "skip"; reason: string; contact: string | null})
  | (Contact & {type: "defer"; until: number; contact: string | null})
  | {type: "step"; step: number}
  | {type: "level"; level: number; run: number}
  | {type: "exhausted"}
  | {type: "wake_at"; at: number; generation: number};

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

/** The state stored at accept time: the first step is due at once, under generation 0. */
export function startEscalation(policy: PolicySnapshot, now: number): EscalationState {
  return {
    steps_total: countSteps(policy),
    generation: 0,
    next_step_at: now,
    status: "running",
    progress: {carried: [], current: null, noted: {}},
    waiting_for: null
  };
}

/**
 * Applies one event at `now`. A wake-up carries the next step not yet carried that can be
 * carried now (one of its contacts reaches a driver; see `stepsInTurn` for the order), then
 * waits the ack timeout.
 * Steps passed over stay due: a step whose channels cannot be used is tried again when it can
 * be (the chain waits, `waiting_for` naming why, and looks again at least every minute), and a
 * step held for quiet hours is tried when they end. Only once every step was carried does the
 * next wake-up exhaust the chain. A chain with no step at all (no channel left in its plan) never
 * ends that way: it waits, undeliverable, and a schedule's chain whose every contact is held for
 * quiet hours waits loudly too, since nobody else can take it. Acknowledge and resolve stop it
 * with no effects. Stale (older
 * generation), early (before next_step_at) or late (chain no longer running) events change
 * nothing, which makes duplicate deliveries harmless.
 */
export function advance(
  state: EscalationState,
  event: EscalationEvent,
  now: number,
  ctx: EscalationContext
): EscalationTransition {
  const unchanged = {state, effects: []};
  if (state.status !== "running") return unchanged;
  if (event.type !== "wake") {
    return {
      state: {...state, status: "stopped", next_step_at: null, waiting_for: null, generation: state.generation + 1},
      effects: []
    };
  }
  if (event.generation !== state.generation) return unchanged;
  if (state.next_step_at !== null && now < state.next_step_at) return unchanged;
  return wake(state, now, ctx);
}

type Decision =
  | {kind: "attempt"; slot: StepSlot; contact: string}
  | {kind: "skip"; slot: StepSlot; reason: string}
  | {kind: "defer"; slot: StepSlot; until: number};

function wake(state: EscalationState, now: number, ctx: EscalationContext): EscalationTransition {
  const generation = state.generation + 1;
  const notes = new NoteBook(state.progress.noted);
  const effects: EscalationEffect[] = [];
  const blocked = new Map<string, WaitReason>();
  const quietEnds: number[] = [];
  const remaining = stepsInTurn(state);
  for (const step of remaining) {
    const slots = stepSlots(ctx.policy, step);
    // Only a policy's level can have nobody at all (a schedule with nobody on call): it moves on, and stays due.
    if (slots.length === 0) {
      const reason = `level ${(levelOf(ctx.policy, step)?.level ?? 0) + 1} of ${ctx.policy.target.name} has nobody to page`;
      blocked.set(reason, {channel: null, reason});
      continue;
    }
    const decisions = slots.map((slot) => decide(slot, now, ctx));
    const attempted = decisions.filter((decision) => decision.kind === "attempt");
    for (const decision of decisions) {
      if (decision.kind === "attempt") continue;
      effects.push(...notes.record(step, decision));
      if (decision.kind === "skip")
        blocked.set(`${decision.slot.channel}\u0000${decision.reason}`, {
          channel: decision.slot.channel,
          reason: decision.reason
        });
      else quietEnds.push(decision.until);
    }
    if (attempted.length === 0) continue;
    for (const decision of attempted)
      effects.push({
        type: "attempt",
        step,
        recipient_uuid: decision.slot.member.recipient_uuid,
        channel: decision.slot.channel,
        contact: decision.contact
      });
    // For a parallel step the longest timeout wins, so every member paged gets their full time to answer;
    // a policy's level keeps its own time, so the next level starts when the policy says.
    const waitSeconds =
      stepWaitSeconds(ctx.policy, step) ??
      Math.max(...attempted.map((decision) => decision.slot.member.ack_timeout_seconds));
    const at = now + waitSeconds * 1000;
    effects.push(...levelStart(ctx.policy, step, state.progress.current));
    effects.push({type: "step", step}, {type: "wake_at", at, generation});
    const progress = {
      carried: [...state.progress.carried, step].sort((a, b) => a - b),
      current: step,
      noted: notes.noted
    };
    return {state: {...state, generation, next_step_at: at, progress, waiting_for: null}, effects};
  }
  const progress = {...state.progress, noted: notes.noted};
  if (state.steps_total === 0) {
    const reason = emptyPlanReason(ctx.policy.priority, leftOutChannels(ctx.policy));
    blocked.set(reason, {channel: null, reason});
  } else if (remaining.length === 0) {
    effects.push({type: "exhausted"});
    return {
      state: {...state, generation, next_step_at: null, status: "exhausted", progress, waiting_for: null},
      effects
    };
  }
  if (ctx.policy.target.kind === "schedule" && blocked.size === 0 && quietEnds.length > 0) {
    const reason = `everyone the schedule can page is in quiet hours until ${new Date(Math.min(...quietEnds)).toISOString()}`;
    blocked.set(reason, {channel: null, reason});
  }
  const at = Math.min(...quietEnds, blocked.size > 0 ? now + WAIT_RETRY_MS : Number.POSITIVE_INFINITY);
  effects.push({type: "wake_at", at, generation});
  return {
    state: {
      ...state,
      generation,
      next_step_at: at,
      progress,
      waiting_for: blocked.size > 0 ? [...blocked.values()] : null
    },
    effects
  };
}

/**
 * For a policy's chain, the level (0-based in `levels`) its next wake-up would start: the level
 * of the first step in turn, when it is not the level of the step carried last. Null otherwise.
 */
export function levelStarting(
  policy: EscalationContext["policy"],
  state: Pick<EscalationState, "progress" | "steps_total">
): number | null {
  const next = nextInTurn(state);
  const level = next === null ? null : levelOf(policy, next);
  if (level === null) return null;
  const current = state.progress.current === null ? null : levelOf(policy, state.progress.current);
  return current?.ordinal === level.ordinal ? null : level.level;
}

/** A `level` effect when `step` is in another level (or run) than the step carried before it. */
function levelStart(policy: EscalationContext["policy"], step: number, previous: number | null): EscalationEffect[] {
  const level = levelOf(policy, step);
  if (level === null) return [];
  if (previous !== null && levelOf(policy, previous)?.ordinal === level.ordinal) return [];
  return [{type: "level", level: level.level + 1, run: level.run + 1}];
}

/** The step the next wake-up tries first (see `stepsInTurn`); null once every step was carried. */
export function nextInTurn(state: Pick<EscalationState, "progress" | "steps_total">): number | null {
  return stepsInTurn(state)[0] ?? null;
}

/**
 * The steps not yet carried, in the order they are tried: those after the current step first,
 * then, wrapping around, those passed over earlier. A chain that joined a storm at another
 * chain's step thus stays aligned with it, and runs the steps before that step afterwards.
 */
function stepsInTurn(state: Pick<EscalationState, "progress" | "steps_total">): number[] {
  const carried = new Set(state.progress.carried);
  const current = state.progress.current ?? -1;
  const open = Array.from({length: state.steps_total}, (_, step) => step).filter((step) => !carried.has(step));
  return [...open.filter((step) => step > current), ...open.filter((step) => step <= current)];
}

/**
 * The skips and deferrals already recorded, per slot: a chain that waits records why once, not
 * at every look, and one reason shared by several steps of a wake-up (a member's whole chain in
 * quiet hours) is recorded once for that member and channel.
 */
class NoteBook {
  readonly noted: Record<string, string>;
  private readonly thisWake = new Set<string>();

  constructor(noted: Record<string, string>) {
    this.noted = {...noted};
  }

  record(step: number, decision: Exclude<Decision, {kind: "attempt"}>): EscalationEffect[] {
    const {member, channel} = decision.slot;
    const reason =
      decision.kind === "skip" ? decision.reason : `deferred until ${new Date(decision.until).toISOString()}`;
    const slotKey = `${step}/${member.recipient_uuid}/${channel}`;
    if (this.noted[slotKey] === reason) return [];
    this.noted[slotKey] = reason;
    const wakeKey = `${member.recipient_uuid}/${channel}/${reason}`;
    if (this.thisWake.has(wakeKey)) return [];
    this.thisWake.add(wakeKey);
    const who = {step, recipient_uuid: member.recipient_uuid, channel, contact: member.contacts[channel] ?? null};
    return decision.kind === "skip"
      ? [{type: "skip", ...who, reason: decision.reason}]
      : [{type: "defer", ...who, until: decision.until}];
  }
}

// Availability is checked before quiet hours: a channel that cannot be used is reported now
// rather than after a night of waiting.
function decide(slot: StepSlot, now: number, ctx: EscalationContext): Decision {
  const {member, channel} = slot;
  const unavailable = ctx.channelUnavailable(channel, member.recipient_uuid);
  if (unavailable !== null) return {kind: "skip", slot, reason: unavailable};
  const contact = member.contacts[channel];
  if (!contact) return {kind: "skip", slot, reason: `no ${channel} contact in the policy snapshot`};
  const quiet = member.quiet_hours;
  if (quiet && !quiet.allow_priorities.includes(ctx.policy.priority)) {
    const until = quietHoursEnd(quiet, now);
    if (until !== null) return {kind: "defer", slot, until};
  }
  return {kind: "attempt", slot, contact};
}
