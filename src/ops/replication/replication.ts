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

/** Litestream's config, written at every start from the settings (0600: it names the sftp key). */
export const LITESTREAM_CONFIG_FILE = "litestream.yml";
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
  readonly box: string;

  constructor(private readonly context: ReplicationContext) {
    const {settings, repository, logger} = context;
    this.box = settings.replication.box_name || hostname();
    const active = settings.replication.role === "active" && repository !== null;
    this.litestream = active
      ? new SupervisedProcess(
          settings.replication.litestream,
          ["replicate", "-config", join(context.dataDir, LITESTREAM_CONFIG_FILE)],
          logger.child({component: "litestream"})
        )
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

  /** Once serving: the epoch from the journal (1 on the first active start), Litestream, the beacon. */
  async start(): Promise<void> {
    const {repository, settings, dataDir, journalPath, logger} = this.context;
    if (!this.litestream || !this.beacon || !repository) return;
    this.epoch = Number(await repository.addDocument(EPOCH_DOCUMENT, "1"));
    writeFileSync(join(dataDir, LITESTREAM_CONFIG_FILE), litestreamConfig(journalPath, settings.replication), {
      mode: 0o600
    });
    this.litestream.start();
    await this.beacon.tick();
    this.beacon.start();
    logger.info("replicating the journal", {box: this.box, epoch: this.epoch, replica: settings.replication.replica});
  }

  /** Before the journal closes: no more beacons. */
  async stopBeacon(): Promise<void> {
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
      beacon_written_at: this.beaconWrittenAt
    };
  }
}
