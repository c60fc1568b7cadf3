import {writeFileSync} from "node:fs";
import {hostname} from "node:os";
import {join} from "node:path";
import type {Settings} from "../../settings/defaults.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {PeriodicTask} from "../../lib/periodic-task.js";
import type {ReplicationRepository} from "../../store/journal/replication.repository.js";
import {litestreamConfig} from "./litestream-config.js";
import {SupervisedProcess, type ProcessState} from "./supervised-process.js";
import {PeerWatch} from "./peer-watch.js";
import {renderExposition, type MetricFamily} from "../metrics/exposition.js";
import type {ReplicationHealth} from "../../services/operations/self-monitor-conditions.js";

/** Litestream's config, written at every start from the settings (0600: it names the sftp key). */
export const LITESTREAM_CONFIG_FILE = "litestream.yml";
/** The box's Litestream process, whichever it runs (replicate as the active, restore -f as the standby). */
export const LITESTREAM_PID_FILE = "litestream.pid";
const BEACON_INTERVAL_MS = 1000;
/** The journal document holding the replication epoch, raised by every takeover. */
export const EPOCH_DOCUMENT = "epoch";

/** What /readyz shows under `replication`. */
export interface ReplicationStatus {
  role: Settings["replication"]["role"];
  box: string | null;
  epoch: number | null;
  /** The `litestream replicate` process on the active; null on a single box. */
  litestream: ProcessState | null;
  /** The newest beacon this box wrote (ISO); null on a single box or before the first. */
  beacon_written_at: string | null;
  /** The standby as this active sees it: how long it has been silent, how far behind its copy is; null on a single box. */
  standby: {silent_seconds: number; lag_seconds: number | null} | null;
}

export interface ReplicationContext {
  settings: Settings;
  dataDir: string;
  journalPath: string;
  /** Null on a single box (replication.role off). */
  repository: ReplicationRepository | null;
  clock: Clock;
  logger: Logger;
}

/**
 * The active box's side of replication (docs/high-availability.md): Litestream ships the journal
 * to the replica, and a beacon row committed every second (box, epoch, time) travels with it, so
 * whoever reads a copy knows how old it is and who wrote it. On a single box it does nothing and
 * reports role off.
 */
export class Replication {
  private epoch: number | null = null;
  private readonly litestream: SupervisedProcess | null;
  private readonly beacon: PeriodicTask | null;
  private beaconWrittenAt: string | null = null;
  /** The active asks the standby's /healthz every second: is it there, and how far behind is its copy. */
  private readonly standby: PeerWatch | null;
  readonly box: string;

  constructor(private readonly context: ReplicationContext) {
    const {settings, repository, logger} = context;
    this.box = settings.replication.box_name || hostname();
    const active = settings.replication.role === "active" && repository !== null;
    this.litestream = active
      ? new SupervisedProcess(
          settings.replication.litestream,
          ["replicate", "-config", join(context.dataDir, LITESTREAM_CONFIG_FILE)],
          logger.child({component: "litestream"}),
          join(context.dataDir, LITESTREAM_PID_FILE)
        )
      : null;
    this.standby = active
      ? new PeerWatch(settings.replication.peer, context.clock, logger.child({component: "standby-watch"}))
      : null;
    this.beacon =
      active && repository
        ? new PeriodicTask("replication-beacon", BEACON_INTERVAL_MS, () => this.writeBeacon(repository), logger)
        : null;
  }

  private async writeBeacon(repository: ReplicationRepository): Promise<void> {
    const writtenAt = isoTimestamp(this.context.clock.now());
    await repository.writeBeacon({box: this.box, epoch: this.epoch ?? 0, written_at: writtenAt});
    this.beaconWrittenAt = writtenAt;
  }

  /**
   * Before the HTTP front opens: the epoch from the journal (1 on the first active start), so the
   * first /healthz after a takeover already says the raised epoch, never null beside 2xx sends.
   */
  async claimEpoch(): Promise<void> {
    const {repository} = this.context;
    if (!this.litestream || !repository) return;
    this.epoch = Number(await repository.addDocument(EPOCH_DOCUMENT, "1"));
  }

  /** Once serving: Litestream and the beacon (under the epoch `claimEpoch` read). */
  async start(): Promise<void> {
    const {repository, settings, dataDir, journalPath, logger} = this.context;
    if (!this.litestream || !this.beacon || !repository) return;
    if (this.epoch === null) await this.claimEpoch();
    writeFileSync(join(dataDir, LITESTREAM_CONFIG_FILE), litestreamConfig(journalPath, settings.replication), {
      mode: 0o600
    });
    this.litestream.start();
    await this.beacon.tick();
    this.beacon.start();
    this.standby?.start();
    logger.info("replicating the journal", {box: this.box, epoch: this.epoch, replica: settings.replication.replica});
  }

  /** Before the journal closes: no more beacons. */
  async stopBeacon(): Promise<void> {
    await this.standby?.stop();
    await this.beacon?.stop();
  }

  /** After the journal has closed: Litestream ships what is left and ends. */
  async stopLitestream(): Promise<void> {
    await this.litestream?.stop();
  }

  status(): ReplicationStatus {
    return {
      role: this.context.settings.replication.role,
      box: this.litestream ? this.box : null,
      epoch: this.epoch,
      litestream: this.litestream ? {...this.litestream.state} : null,
      beacon_written_at: this.beaconWrittenAt,
      standby: this.standby
        ? {silent_seconds: this.standby.silentMs() / 1000, lag_seconds: this.standby.last?.lag_seconds ?? null}
        : null
    };
  }

  /**
   * The replication metrics, on the active of two boxes (empty otherwise): the standby's lag as it
   * last said (NaN before it said), how long it has been silent, and Litestream's restarts.
   */
  exposition(): string {
    const status = this.status();
    if (!status.standby || !status.litestream) return "";
    const families: MetricFamily[] = [
      {
        name: "klaxon_replication_lag_seconds",
        help: "How far behind the standby's copy of the journal is (the age of the newest beacon in it), as it last said",
        type: "gauge",
        samples: [{value: status.standby.lag_seconds ?? NaN}]
      },
      {
        name: "klaxon_replication_standby_silent_seconds",
        help: "Since the standby's /healthz last answered",
        type: "gauge",
        samples: [{value: status.standby.silent_seconds}]
      },
      {
        name: "klaxon_replication_litestream_restarts_total",
        help: "Times litestream replicate ended by itself and was started again",
        type: "counter",
        samples: [{value: status.litestream.restarts}]
      }
    ];
    return renderExposition(families);
  }

  /** For the self-monitor's alarm: null unless this box is the active of two. */
  health(): ReplicationHealth | null {
    if (!this.standby) return null;
    return {
      peer: this.context.settings.replication.peer,
      silentSeconds: this.standby.silentMs() / 1000,
      lagSeconds: this.standby.last?.lag_seconds ?? null,
      alarmSeconds: this.context.settings.replication.lag_alarm_seconds
    };
  }
}
