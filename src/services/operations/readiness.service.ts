import {statfs} from "node:fs/promises";
import type {Journal} from "../../store/journal/journal.js";
import type {EventsRepository} from "../../store/journal/events.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import {
  withAuditFindings,
  type AuditFinding,
  type LoudUndeliverable
} from "../../store/journal/paging-audit.repository.js";
import type {ChannelState, ChannelStatusService} from "../shared/channel-status.service.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {TimedSweep} from "../../lib/timed-sweep.js";
import type {SchedulesRepository} from "../../store/config/repositories.js";
import {upcomingGaps, type ScheduleGapWarning} from "./schedule-gaps.js";
import type {MqttBrokerState} from "../../domain/mqtt.js";
import type {PlcLinkState} from "../integrations/plc/plc-links.service.js";
import type {ParserWorkerReport} from "../../lib/parser-workers.js";
import type {PlanWarning} from "../../domain/plan-coverage.js";
import type {UnmappedWarning} from "../integrations/integrations.service.js";

export interface Readiness {
  ready: boolean;
  /** `damaged`: SQLite found the file damaged, once and for good (Journal.damage); `error` then says where. */
  journal: {can_commit: boolean; schema_version: number; error: string | null; damaged: boolean};
  channels: ChannelState[];
  outbox: {pending: number; oldest: string | null};
  /** Space left where the journal and the config store live; null fields when it cannot be read. */
  disk: {path: string; free_bytes: number | null; total_bytes: number | null; error: string | null};
  /** The heartbeat sweep: whether it runs, when it next wakes, whether its last pass failed. */
  heartbeats: TimedSweep["health"];
  /**
   * The sweep that releases what a maintenance window held once it ends, the same way. A failed
   * last pass makes the gateway unready, as a failed heartbeat pass does: until a pass succeeds,
   * alerts may stay held after their window (nobody paged), or a silent machine go unnoticed.
   */
  maintenance: TimedSweep["health"];
  /** The paging auditor (docs/reliability.md), the same way: a failed last pass makes the gateway unready. */
  auditor: TimedSweep["health"];
  /**
   * Open notifications waiting for a channel they cannot use now, and those the paging auditor
   * found with no page carried in time (channel null); count -1 when the journal cannot be read.
   */
  undeliverable: LoudUndeliverable;
  /**
   * Client addresses whose new failed authentications get 429 now (valid credentials from them
   * still pass): a device behind them with a stale key or ping URL, or someone guessing. Does not
   * make the gateway unready.
   */
  throttled_addresses: string[];
  /** Schedules with nobody on call some time in the next 14 days (their fallback is paged then). Does not make the gateway unready. */
  schedule_gaps: ScheduleGapWarning[];
  /**
   * Each MQTT integration's broker connection. Does not make the gateway unready, as a channel
   * that is down does not: the API and the other transports still take alerts.
   */
  mqtt_brokers: MqttBrokerState[];
  /**
   * Each modbus or opcua integration's device link: an unreachable device pages its target after
   * unreachable_after_seconds. Does not make the gateway unready.
   */
  plc_links: PlcLinkState[];
  /**
   * The supervised parser workers of the device doors (SNMP...): up or restarting, crashes by
   * kind, input dropped or lost. Does not make the gateway unready: a parser that crashes costs
   * that door's input, never paging.
   */
  parser_workers: ParserWorkerReport[];
  /** What the configuration will not do on this box (a priority with no channel, contacts for a channel not configured). Does not make the gateway unready. */
  plan_warnings: PlanWarning[];
  /**
   * Device integrations set to `unmapped: "keep"` that kept messages no rule maps in the last 24
   * hours: nobody was paged for them. A warning; does not make the gateway unready.
   */
  unmapped_kept: UnmappedWarning[];
}

/** What ReadinessService works with, by name. */
export interface ReadinessDeps {
  journal: Journal;
  events: EventsRepository;
  escalations: EscalationsRepository;
  channels: ChannelStatusService;
  clock: Clock;
  dataDir: string;
  sweeps: {
    heartbeats: TimedSweep;
    maintenance: TimedSweep;
    auditor: Pick<TimedSweep, "health"> & {findings(): AuditFinding[]};
  };
  schedules: SchedulesRepository;
  mqttBrokers: () => MqttBrokerState[];
  plcLinks: () => PlcLinkState[];
  parserWorkers: () => ParserWorkerReport[];
  planWarnings: () => PlanWarning[];
  unmappedKept: () => UnmappedWarning[];
}

/**
 * What /readyz reports: can the journal commit, can every open alert reach someone, do the
 * background sweeps run, and what state each channel is in. Not ready while any of the first three
 * fails: monitors watch the status code. No secrets.
 */
export class ReadinessService {
  constructor(private readonly deps: ReadinessDeps) {}

  /** `throttledAddresses` comes from the HTTP edge, which alone counts failed authentications. */
  async check(throttledAddresses: string[]): Promise<Readiness> {
    let error: string | null = null;
    // -1: the journal cannot be read now.
    let counts: Pick<Readiness, "outbox" | "undeliverable"> = {
      outbox: {pending: -1, oldest: null},
      undeliverable: {count: -1, reasons: []}
    };
    try {
      // Damage seen once stays the reason (a latch): a probe that misses the damaged pages proves nothing.
      if (this.deps.journal.damage === null) {
        await this.deps.journal.probe(isoTimestamp(this.deps.clock.now()));
        counts = this.deps.journal.read(() => ({
          outbox: this.deps.events.backlog(),
          undeliverable: withAuditFindings(this.deps.escalations.undeliverable(), this.deps.sweeps.auditor.findings())
        }));
      }
    } catch (failure) {
      error = (failure as Error).message;
    }
    error = this.deps.journal.damage ?? error;
    const {outbox, undeliverable} = counts;
    const heartbeats = this.deps.sweeps.heartbeats.health;
    const maintenance = this.deps.sweeps.maintenance.health;
    const auditor = this.deps.sweeps.auditor.health;
    return {
      ready:
        error === null &&
        undeliverable.count === 0 &&
        ![heartbeats, maintenance, auditor].some((sweep) => sweep.last_pass_failed),
      journal: {
        can_commit: error === null,
        schema_version: this.deps.journal.schemaVersion,
        error,
        damaged: this.deps.journal.damage !== null
      },
      channels: this.deps.channels.all(),
      outbox,
      undeliverable,
      disk: await this.disk(),
      heartbeats,
      maintenance,
      auditor,
      throttled_addresses: throttledAddresses,
      schedule_gaps: upcomingGaps(this.deps.schedules, this.deps.clock.now()),
      mqtt_brokers: this.deps.mqttBrokers(),
      plc_links: this.deps.plcLinks(),
      parser_workers: this.deps.parserWorkers(),
      plan_warnings: this.deps.planWarnings(),
      unmapped_kept: this.deps.unmappedKept()
    };
  }

  private async disk(): Promise<Readiness["disk"]> {
    try {
      const stats = await statfs(this.deps.dataDir);
      // bavail, not bfree: the blocks an unprivileged process (the gateway) may still use.
      return {
        path: this.deps.dataDir,
        free_bytes: stats.bavail * stats.bsize,
        total_bytes: stats.blocks * stats.bsize,
        error: null
      };
    } catch (failure) {
      return {path: this.deps.dataDir, free_bytes: null, total_bytes: null, error: (failure as Error).message};
    }
  }
}
