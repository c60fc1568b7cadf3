import type {Priority} from "./vocabulary.js";
import {nextExpectedAt, type HeartbeatSchedule} from "./heartbeat-schedule.js";

/** A heartbeat name: a lowercase slug, safe in a URL path and in a dedup key. */
export const HEARTBEAT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const HEARTBEAT_STATUSES = ["new", "up", "late", "down", "paused"] as const;
export type HeartbeatStatus = (typeof HEARTBEAT_STATUSES)[number];

/** A heartbeat's definition, as the config store keeps it. */
export interface HeartbeatDefinition {
  /** A slug; also the dedup key of its page (`heartbeat:<name>`) and the path of its API. */
  name: string;
  period_seconds: number | null;
  schedule: string | null;
  timezone: string | null;
  grace_seconds: number;
  /** Recipient, group or schedule uuid paged when the heartbeat goes down. */
  target: string;
  priority: Priority;
  /** The unguessable part of the keyless ping URL. */
  ping_token: string;
  /** The integration that created it through a `heartbeat` event, or null. */
  created_by_integration: string | null;
  created_at: string;
  updated_at: string;
}

/** What the domain needs of a definition: when pings are due and how long to wait past that. */
export interface HeartbeatTiming {
  schedule: HeartbeatSchedule;
  grace_seconds: number;
}

/** Run-time state (kept in the journal). Instants are ms since the epoch. */
export interface HeartbeatState {
  status: HeartbeatStatus;
  last_ping_at: number | null;
  /** A run announced with `/start` and not yet finished by a ping or a failure. */
  last_start_at: number | null;
  /** When the next ping is due; null while nothing is expected (new, paused, down). */
  expected_at: number | null;
  /** When silence becomes down: past the due time (or a started run's start) by the grace. */
  down_at: number | null;
  /** A down page is outstanding: the next good ping resolves it. */
  paged: boolean;
}

export type HeartbeatEvent =
  /** A good ping: the job ran, the device lives. */
  | {type: "ping"}
  /** A run began; it must end (ping or fail) within the grace time. */
  | {type: "start"}
  /** The job reported failure: down at once, with the wrapped command's exit code when the caller sent it. */
  | {type: "fail"; exit_code?: number}
  /** The sweep found the heartbeat due. */
  | {type: "due"}
  | {type: "pause"}
  | {type: "resume"}
  /** The definition's schedule or grace changed. */
  | {type: "reconfigured"}
  /** The gateway serves again after a stop: nobody could ping it meanwhile. */
  | {type: "restart"}
  /** Its page was closed by someone (resolved by hand) while the heartbeat had not come back. */
  | {type: "page_closed"};

export type HeartbeatEffect =
  | {type: "page"; reason: "missed" | "failed"; exit_code?: number}
  | {type: "resolve"}
  /** A status change worth the audit log (every one but a ping that keeps it up). */
  | {type: "status_changed"; from: HeartbeatStatus; to: HeartbeatStatus};

export interface HeartbeatTransition {
  state: HeartbeatState;
  effects: HeartbeatEffect[];
}

export const NEW_HEARTBEAT: HeartbeatState = {
  status: "new",
  last_ping_at: null,
  last_start_at: null,
  expected_at: null,
  down_at: null,
  paged: false
};

/** The definition's schedule as the domain reads it. */
export function timingOf(
  definition: Pick<HeartbeatDefinition, "period_seconds" | "schedule" | "timezone" | "grace_seconds">
): HeartbeatTiming {
  const schedule: HeartbeatSchedule =
    definition.schedule !== null
      ? {kind: "cron", schedule: definition.schedule, timezone: definition.timezone ?? "UTC"}
      : {kind: "period", period_seconds: definition.period_seconds ?? 0};
  return {schedule, grace_seconds: definition.grace_seconds};
}

/**
 * When the sweep must next look at the heartbeat: the due time while it is up (it turns late
 * then), otherwise the moment it goes down; null when nothing can happen without a ping.
 */
export function alertAfter(state: HeartbeatState): number | null {
  if (state.down_at === null) return null;
  // Down with its page closed by hand: watched again, so the next missed deadline pages anew.
  if (state.status === "down" && !state.paged) return state.down_at;
  if (state.status === "up" && state.expected_at !== null && state.expected_at < state.down_at)
    return state.expected_at;
  if (state.status === "up" || state.status === "late" || state.status === "new") return state.down_at;
  return null;
}

/** The earlier of the two deadlines the grace applies to: the due time and a started run's start. */
function downAt(expectedAt: number | null, lastStartAt: number | null, graceMs: number): number | null {
  const deadlines = [expectedAt, lastStartAt].filter((at): at is number => at !== null).map((at) => at + graceMs);
  return deadlines.length ? Math.min(...deadlines) : null;
}

function changed(from: HeartbeatState, state: HeartbeatState, effects: HeartbeatEffect[] = []): HeartbeatTransition {
  const all: HeartbeatEffect[] =
    from.status === state.status
      ? effects
      : [{type: "status_changed", from: from.status, to: state.status}, ...effects];
  return {state, effects: all};
}

function unchanged(state: HeartbeatState): HeartbeatTransition {
  return {state, effects: []};
}

/** Up from now on: the next ping is expected per the schedule, and any outstanding page is resolved. */
function upAfterPing(state: HeartbeatState, timing: HeartbeatTiming, now: number): HeartbeatTransition {
  const expectedAt = nextExpectedAt(timing.schedule, now);
  const next: HeartbeatState = {
    status: "up",
    last_ping_at: now,
    last_start_at: null,
    expected_at: expectedAt,
    down_at: downAt(expectedAt, null, timing.grace_seconds * 1000),
    paged: false
  };
  return changed(state, next, state.paged ? [{type: "resolve"}] : []);
}

function down(
  state: HeartbeatState,
  reason: "missed" | "failed",
  patch: Partial<HeartbeatState> = {},
  exitCode?: number
): HeartbeatTransition {
  const next: HeartbeatState = {
    ...state,
    ...patch,
    status: "down",
    expected_at: null,
    down_at: null,
    last_start_at: null,
    paged: true
  };
  return changed(state, next, [{type: "page", reason, ...(exitCode === undefined ? {} : {exit_code: exitCode})}]);
}

/**
 * The heartbeat state machine (healthchecks.io's model): `new` is inert until the first ping;
 * `up` turns `late` at the due time and `down` when the grace runs out too, paging the target
 * once; a good ping brings it `up` again from any status and resolves the page; a failure
 * pages at once; `paused` is inert until a ping or a resume. A down heartbeat whose page was
 * closed by hand pages again at its next failure or missed deadline. After a restart every deadline
 * is at least a full grace away, so time the gateway spent stopped never pages.
 */
export function transition(
  state: HeartbeatState,
  event: HeartbeatEvent,
  timing: HeartbeatTiming,
  now: number
): HeartbeatTransition {
  const graceMs = timing.grace_seconds * 1000;
  switch (event.type) {
    case "ping":
      return upAfterPing(state, timing, now);
    case "fail":
      // Down with its page open: that page stands for this failure too. Closed: a new page.
      if (state.status === "down" && state.paged) return unchanged({...state, last_ping_at: now, last_start_at: null});
      return down(state, "failed", {last_ping_at: now}, event.exit_code);
    case "start": {
      // A paused or down heartbeat has no deadline for a run to miss; the start is only recorded.
      if (state.status === "paused" || state.status === "down") return unchanged({...state, last_start_at: now});
      return unchanged({...state, last_start_at: now, down_at: downAt(state.expected_at, now, graceMs)});
    }
    case "due": {
      if (
        state.down_at !== null &&
        now >= state.down_at &&
        (state.status === "up" ||
          state.status === "late" ||
          state.status === "new" ||
          (state.status === "down" && !state.paged))
      )
        return down(state, "missed");
      if (state.status === "up" && state.expected_at !== null && now >= state.expected_at)
        return changed(state, {...state, status: "late"});
      return unchanged(state);
    }
    case "pause":
      if (state.status === "paused") return unchanged(state);
      // An outstanding page stays open (someone may be on it); the next good ping still resolves it.
      return changed(state, {...state, status: "paused", expected_at: null, down_at: null, last_start_at: null});
    case "resume": {
      if (state.status !== "paused") return unchanged(state);
      // A heartbeat that has pinged before is watched again from now, so a device that died during the pause is noticed.
      if (state.last_ping_at === null) return changed(state, {...state, status: "new"});
      const expectedAt = nextExpectedAt(timing.schedule, now);
      return changed(state, {
        ...state,
        status: "up",
        expected_at: expectedAt,
        down_at: downAt(expectedAt, null, graceMs)
      });
    }
    case "reconfigured": {
      if (state.status !== "up" && state.status !== "late") return unchanged(state);
      const expectedAt = nextExpectedAt(timing.schedule, state.last_ping_at ?? now);
      const status = expectedAt !== null && now >= expectedAt ? "late" : "up";
      return changed(state, {
        ...state,
        status,
        expected_at: expectedAt,
        down_at: downAt(expectedAt, state.last_start_at, graceMs)
      });
    }
    case "restart": {
      if (state.down_at === null) return unchanged(state);
      return unchanged({...state, down_at: Math.max(state.down_at, now + graceMs)});
    }
    case "page_closed": {
      if (state.status !== "down") return unchanged({...state, paged: false});
      // Still down (no good ping came), but nobody is on it any more: a failure pages at once,
      // and silence past the next due time plus the grace pages as a missed ping.
      const expectedAt = nextExpectedAt(timing.schedule, now);
      return unchanged({...state, paged: false, expected_at: expectedAt, down_at: downAt(expectedAt, null, graceMs)});
    }
  }
}
