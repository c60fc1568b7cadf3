import {createHash} from "node:crypto";
import type {Channel} from "../../domain/vocabulary.js";
import {waitingWords, type WaitReason} from "../../domain/notification.js";
import type {LoudUndeliverable} from "../../store/journal/paging-audit.repository.js";
import type {ChannelState} from "../shared/channel-status.service.js";
import {describeGap, type ScheduleGapWarning} from "./schedule-gaps.js";

/** One thing the gateway watches about its own paging path; `problem` is null while it is healthy. */
export interface Condition {
  /** Stable name; the alert's dedup key is `klaxon:<key>`. */
  key: string;
  problem: string | null;
}

export interface SelfMonitorLimits {
  signal_min_dbm: number;
  outbox_max_age_minutes: number;
}

/** What one self-check looks at. */
export interface SelfCheckInput {
  /** The channels the gateway has a driver for (set up by the operator), with their live state. */
  channels: ChannelState[];
  outbox: {pending: number; oldest: string | null};
  /** Why open alerts wait for a channel, not counting the self-monitor's own pages (see othersWaiting). */
  undeliverable: LoudUndeliverable["reasons"];
  /** Schedules with a gap in the next 14 days. */
  scheduleGaps: ScheduleGapWarning[];
  /** The standby as the active sees it; null on a single box and on a standby. */
  replication?: ReplicationHealth | null;
  nowMs: number;
}

/** What the active box knows of its standby (docs/high-availability.md). */
export interface ReplicationHealth {
  peer: string;
  /** Since the standby's /healthz last answered. */
  silentSeconds: number;
  /** How old the newest beacon in the standby's copy is, as it last said; null before it said. */
  lagSeconds: number | null;
  /** replication.lag_alarm_seconds. */
  alarmSeconds: number;
}

/** A standby that is silent or far behind would not be there when it is needed: found before it is. */
function replicationProblem(health: ReplicationHealth): string | null {
  const seconds = (value: number) => `${Math.round(value)} s`;
  if (health.silentSeconds > health.alarmSeconds)
    return `the standby box ${health.peer} has not answered for ${seconds(health.silentSeconds)}: nothing would take over if this box failed`;
  if (health.lagSeconds !== null && health.lagSeconds > health.alarmSeconds)
    return `the standby's copy of the journal is ${seconds(health.lagSeconds)} behind: replication (Litestream) is not reaching it`;
  return null;
}

/** The condition of one cause (channel, or the paging auditor's finding, and reason); the reason is hashed so any length fits a dedup key. */
export function undeliverableKey(cause: Pick<LoudUndeliverable["reasons"][number], "channel" | "reason">): string {
  return `undeliverable:${cause.channel ?? "audit"}:${createHash("sha256").update(cause.reason).digest("hex").slice(0, 12)}`;
}

/**
 * The causes other alerts wait for. A self-monitoring page waiting for the same broken channel
 * would otherwise keep its own cause alive after every real alert is carried or closed.
 */
export function othersWaiting(
  reasons: LoudUndeliverable["reasons"],
  ownWaits: WaitReason[][]
): LoudUndeliverable["reasons"] {
  return reasons
    .map((entry) => {
      const own = ownWaits.filter((waits) =>
        waits.some((wait) => wait.channel === entry.channel && wait.reason === entry.reason)
      ).length;
      return {...entry, notifications: entry.notifications - own};
    })
    .filter((entry) => entry.notifications > 0);
}

const REGISTERED = ["home", "roaming"];

// A modem driver's details carry the modem's health (src/modem/health.ts); the fields are read
// defensively because each driver decides what it exposes.
function modemDetails(
  state: ChannelState
): {port_open?: unknown; sim?: unknown; registration?: unknown; signal?: {dbm?: unknown}} | null {
  const details = state.details;
  return details && ("sim" in details || "registration" in details) ? details : null;
}

/**
 * The conditions, from the live state: pure, so every rule is tested with plain values. Each
 * cause that leaves alerts undeliverable is a condition of its own, present only while it lasts. Modem
 * trouble is named by its cause (port, SIM, registration, signal) rather than once per channel
 * the modem serves; a channel is named on its own only when no modem cause explains it.
 */
export function selfCheck(input: SelfCheckInput, limits: SelfMonitorLimits): Condition[] {
  const modems = input.channels
    .map((state) => ({state, modem: modemDetails(state)}))
    .filter((item) => item.modem !== null);
  const modem = modems[0]?.modem ?? null;
  const conditions: Condition[] = [];
  if (modem) {
    const dbm = typeof modem.signal?.dbm === "number" ? modem.signal.dbm : null;
    conditions.push(
      {
        key: "modem:port",
        problem: modem.port_open === false ? "the modem's serial port is not open (unplugged?)" : null
      },
      {
        key: "modem:sim",
        problem:
          typeof modem.sim === "string" && modem.sim !== "ready" && modem.sim !== "unknown"
            ? `the modem's SIM is not ready (${modem.sim})`
            : null
      },
      {
        key: "modem:registration",
        problem:
          typeof modem.registration === "string" &&
          !REGISTERED.includes(modem.registration) &&
          modem.registration !== "unknown"
            ? `the modem is not registered on the mobile network (${modem.registration})`
            : null
      },
      {
        key: "modem:signal",
        problem:
          dbm !== null && dbm < limits.signal_min_dbm
            ? `the modem's signal is too weak (${dbm} dBm, below ${limits.signal_min_dbm} dBm)`
            : null
      }
    );
  }
  const modemExplains = conditions.some((condition) => condition.problem !== null);
  const modemChannels = new Set<Channel>(modems.map((item) => item.state.channel));
  for (const state of input.channels) {
    const explained = modemChannels.has(state.channel) && modemExplains;
    conditions.push({
      key: `channel:${state.channel}`,
      problem:
        state.available || explained
          ? null
          : `the ${state.channel} channel is unavailable: ${state.reason ?? "no reason given"}`
    });
  }
  for (const entry of input.undeliverable)
    conditions.push({key: undeliverableKey(entry), problem: waitingWords(entry)});
  for (const gap of input.scheduleGaps) conditions.push({key: `schedule-gap:${gap.uuid}`, problem: describeGap(gap)});
  if (input.replication) conditions.push({key: "replication:standby", problem: replicationProblem(input.replication)});
  const ageMinutes = input.outbox.oldest === null ? 0 : (input.nowMs - Date.parse(input.outbox.oldest)) / 60_000;
  conditions.push({
    key: "outbox:backlog",
    problem:
      ageMinutes > limits.outbox_max_age_minutes
        ? `${input.outbox.pending} webhook deliveries are waiting, the oldest for ${Math.floor(ageMinutes)} minutes`
        : null
  });
  return conditions;
}
