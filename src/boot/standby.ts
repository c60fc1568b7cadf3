import {existsSync, mkdirSync, renameSync, rmSync} from "node:fs";
import {dirname, join, resolve} from "node:path";
import {hostname} from "node:os";
import type {Settings} from "../settings/defaults.js";
import {createLogger, type Logger} from "../lib/logger.js";
import {isoTimestamp, systemClock} from "../lib/clock.js";
import {startGateway, type Gateway, type GatewayOptions} from "./gateway.js";
import {closeHttpFront, openHttpFront, type HttpFront} from "../server.js";
import {StandbyStatus} from "../api/standby/standby-door.js";
import {Runtime} from "../api/runtime.js";
import {requestRecorder} from "../api/http/pipeline.js";
import {askPeer, PeerWatch, type PeerAnswer} from "../ops/replication/peer-watch.js";
import {SupervisedProcess} from "../ops/replication/supervised-process.js";
import {beaconOfReplica} from "../ops/replication/replica-probe.js";
import {EPOCH_DOCUMENT, LITESTREAM_PID_FILE} from "../ops/replication/replication.js";
import {BACKUP_FILES, OPTIONAL_BACKUP_FILES} from "../ops/backup-layout.js";
import {DataDirLock} from "../ops/data-dir-lock.js";
import {readBeaconFrom} from "../store/journal/replication.repository.js";
import {openStores} from "../store/open-stores.js";
import {JOURNAL_FILE_SUFFIXES} from "../store/journal/wal-guard.js";
import {SYSTEM_ACTOR} from "../domain/actor.js";
import {TAKEOVER_DOCUMENT, type TakeoverRecord} from "../domain/tail.js";
import {FORMER_JOURNAL_PREFIX, TailHandOver} from "../ops/replication/tail-hand-over.js";

/** How often the follower applies what reached the replica: a fifth of a second behind at most. */
const FOLLOW_INTERVAL = "200ms";
/** Litestream's note of the position it has restored to, beside the copy. */
const TXID_SUFFIX = "-txid";

/** A box in a pair: serving as the active, or standing by. `stop` stops whichever it is now. */
export interface Box {
  /** The gateway once this box is (or has become) the active; null while it stands by. */
  gateway(): Gateway | null;
  url(): string;
  /** Resolves with the gateway when a standby has taken over. */
  takenOver: Promise<Gateway>;
  stop(): Promise<void>;
}

const asActive = (settings: Settings): Settings => ({
  ...settings,
  replication: {...settings.replication, role: "active"}
});

/**
 * Which role this box starts in (docs/high-availability.md, "Roles"), first match:
 * - the standby while the peer answers as the active (a returning former active never pages beside
 *   the box that took over from it);
 * - the standby when a state of a higher epoch than this box's journal exists, shipped into its
 *   `incoming` folder or held by the peer standing by (the peer took over and went down itself, or
 *   this box's journal was lost): this box serves that state only by taking over from it;
 * - the active when this box wrote its journal itself as the active, the standby when the journal
 *   is a copy it followed (it becomes the active by a takeover, which raises the epoch and pages);
 * - with no journal, the configured role.
 */
export async function startingRole(
  settings: Settings,
  box: string,
  journalPath: string
): Promise<"active" | "standby"> {
  const peer = await askPeer(settings.replication.peer);
  if (peer?.role === "active") return "standby";
  const own = readBeaconFrom(journalPath);
  const shipped = await beaconOfReplica(
    settings.replication.litestream,
    settings.replication.incoming,
    dirname(journalPath)
  );
  // A newer state than this box's exists (shipped here, or followed by the peer standing by): this
  // box serves it only by taking over, which raises the epoch and pages.
  const newest = Math.max(shipped?.epoch ?? 0, peer?.role === "standby" ? (peer.epoch ?? 0) : 0);
  if (newest > (own?.epoch ?? 0)) return "standby";
  if (own) return own.box === box ? "active" : "standby";
  return settings.replication.role === "active" ? "active" : "standby";
}

/**
 * Starts a box of a replicated pair: `startGateway` as the active, or the standby, which follows
 * its `incoming` replica with `litestream restore -f`, watches the active's /healthz, and after
 * `takeover_after_seconds` of silence takes over: brings its copy to the last replicated position,
 * raises the epoch, starts the gateway as the active (which resumes every open escalation from its
 * stored state) and pages the self-monitoring recipient.
 */
export async function startBox(settings: Settings, options: GatewayOptions = {}): Promise<Box> {
  const logger = options.logger ?? createLogger(settings.log.level);
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(settings.data_dir);
  const journalPath = join(dataDir, BACKUP_FILES.journal);
  const box = settings.replication.box_name || hostname();
  // As the gateway would at its first start: the role's probe and the follower write in there.
  mkdirSync(dataDir, {recursive: true, mode: 0o700});
  const role = await startingRole(settings, box, journalPath);
  logger.info("starting as one of two boxes", {box, role, peer: settings.replication.peer});
  if (role === "active") {
    const gateway = await startGateway(asActive(settings), options);
    return {
      gateway: () => gateway,
      url: () => gateway.url,
      takenOver: new Promise(() => undefined),
      stop: () => gateway.stop()
    };
  }
  return standBy(settings, options, {logger, dataDir, journalPath, box, clock});
}

interface StandbyContext {
  logger: Logger;
  dataDir: string;
  journalPath: string;
  box: string;
  clock: typeof systemClock;
}

async function standBy(settings: Settings, options: GatewayOptions, context: StandbyContext): Promise<Box> {
  const {logger, dataDir, journalPath, box, clock} = context;
  const follower = new SupervisedProcess(
    settings.replication.litestream,
    [
      "restore",
      "-f",
      "-follow-interval",
      FOLLOW_INTERVAL,
      "-o",
      journalPath,
      `file://${settings.replication.incoming}`
    ],
    logger.child({component: "litestream-follow"}),
    join(dataDir, LITESTREAM_PID_FILE)
  );
  let gateway: Gateway | null = null;
  let door: HttpFront | null = null;
  // Once: a stop during a takeover must not stop the Ts.ED app the new active has built meanwhile.
  const closeDoor = async () => {
    const closing = door;
    door = null;
    if (closing) await closeHttpFront(closing);
  };
  let takingOver = false;
  let settle: (gateway: Gateway) => void = () => undefined;
  const takenOver = new Promise<Gateway>((resolve) => (settle = resolve));

  const takeOver = async () => {
    await watch.stop();
    // Not awaited: a hand-over waiting on a peer that does not answer must not hold up the takeover.
    void tail.stop();
    await follower.stop();
    const beacon = readBeaconFrom(journalPath);
    rmSync(journalPath + TXID_SUFFIX, {force: true});
    await closeDoor();
    const epoch = (beacon?.epoch ?? 0) + 1;
    const takeover = beacon && {
      epoch,
      box,
      from: beacon.box,
      from_epoch: beacon.epoch,
      copy_beacon_at: beacon.written_at
    };
    await raiseEpoch(settings, {dataDir, journalPath, epoch, takeover}, logger);
    gateway = await startGateway(asActive(settings), options);
    logger.warn("took over as the active box", {box, from: beacon?.box, epoch});
    await pageTakeover(gateway, settings, {box, from: beacon?.box ?? "the other box", epoch}, logger);
    settle(gateway);
  };
  const onPass = () => {
    const silent = watch.silentMs() >= settings.replication.takeover_after_seconds * 1000;
    // Never on an empty copy: a standby that has followed nothing has nothing to serve.
    if (!silent || takingOver || readBeaconFrom(journalPath) === null) return;
    takingOver = true;
    logger.warn("no box is serving: taking over", {
      peer: settings.replication.peer,
      peer_role: watch.last?.role ?? null,
      silent_ms: watch.silentMs()
    });
    takeOver().catch((error: unknown) => logger.error("takeover failed", {error: error as Error}));
  };
  const watch = new PeerWatch(settings.replication.peer, clock, logger.child({component: "peer-watch"}), {
    onPass,
    counts: (peer) => servesOrOutranks(peer, readBeaconFrom(journalPath)?.epoch ?? null, box)
  });

  // What this box accepted as the active and never shipped goes to the active (started once its
  // journal is moved aside, below).
  const tail = new TailHandOver(settings.replication.peer, dataDir, logger.child({component: "tail-hand-over"}));
  const state = () => {
    const beacon = readBeaconFrom(journalPath);
    return {
      role: "standby" as const,
      box,
      epoch: beacon?.epoch ?? null,
      lag_seconds: beacon ? Math.max(0, (clock.now() - Date.parse(beacon.written_at)) / 1000) : null,
      active_box: beacon?.box ?? null,
      active_silent_seconds: watch.silentMs() / 1000
    };
  };
  // The port first: a second start of this box on the same data dir fails there, before it moves
  // away the copy the first one follows (or ends that one's follower through litestream.pid).
  const front = await openHttpFront(settings, {
    providers: [{token: Runtime, use: Runtime.fromSettings(settings, logger, clock)}],
    recordRequest: requestRecorder(logger),
    logger,
    standby: new StandbyStatus({peer: settings.replication.peer, state, tail: () => tail.status()})
  });
  door = front;
  const lock = DataDirLock.acquire(dataDir);
  moveJournalAside({dataDir, journalPath, box}, clock.now(), logger);
  // Before it stands by: what this box accepted as the active and never shipped goes to the active.
  tail.start();
  follower.start();
  watch.start();
  logger.info("standing by", {box, url: front.url, following: settings.replication.incoming});
  const standbyUrl = front.url;
  return {
    gateway: () => gateway,
    url: () => gateway?.url ?? standbyUrl,
    takenOver,
    async stop() {
      await watch.stop();
      await tail.stop();
      await follower.stop();
      await closeDoor();
      await gateway?.stop();
      lock.release();
    }
  };
}

/**
 * Whether the peer's answer keeps this standby waiting: it serves as the active, or it stands by
 * too with a newer copy (higher epoch; at the same epoch, the box name first in order), so that of
 * two standbys exactly one takes over, instead of neither (nobody paged) or both (two journals).
 */
export function servesOrOutranks(peer: PeerAnswer, ownEpoch: number | null, box: string): boolean {
  if (peer.role !== "standby") return true;
  if (peer.epoch === null) return false;
  if (ownEpoch === null || peer.epoch !== ownEpoch) return peer.epoch > (ownEpoch ?? 0);
  return (peer.box ?? "") < box;
}

/**
 * Before following: a copy an earlier standby run followed is dropped (the replica holds all of
 * it); a journal this box wrote itself (it was the active) is kept aside for the operator, since it
 * may hold alerts it accepted and never shipped.
 */
function moveJournalAside(
  {dataDir, journalPath, box}: {dataDir: string; journalPath: string; box: string},
  now: number,
  logger: Logger
): void {
  const files = [...JOURNAL_FILE_SUFFIXES, TXID_SUFFIX].map((suffix) => journalPath + suffix).filter(existsSync);
  if (!files.length) return;
  const writer = readBeaconFrom(journalPath)?.box;
  if (writer !== undefined && writer !== box) {
    for (const file of files) rmSync(file, {force: true});
    logger.info("dropped the copy of the active's journal an earlier run followed: following afresh", {of: writer});
    return;
  }
  const aside = join(dataDir, `${FORMER_JOURNAL_PREFIX}${isoTimestamp(now).replace(/:/g, "-")}`);
  mkdirSync(aside, {recursive: true, mode: 0o700});
  for (const file of files) renameSync(file, join(aside, file.slice(dataDir.length + 1)));
  logger.warn("moved this box's own journal aside to follow the active's", {to: aside});
}

/**
 * The new active's epoch, committed before it serves: higher than any beacon the old active wrote;
 * and what it took over (the old active's newest beacon in this copy), from which the old active,
 * when it comes back, knows which of its changes this box lacks.
 */
async function raiseEpoch(
  settings: Settings,
  {
    dataDir,
    journalPath,
    epoch,
    takeover
  }: {dataDir: string; journalPath: string; epoch: number; takeover: TakeoverRecord | null},
  logger: Logger
) {
  const stores = await openStores(
    asActive(settings),
    {
      journal: journalPath,
      config: join(dataDir, BACKUP_FILES.config),
      ackLinkKey: join(dataDir, OPTIONAL_BACKUP_FILES.ackLinkKey)
    },
    {logger}
  );
  try {
    await stores.replication?.putDocument(EPOCH_DOCUMENT, String(epoch));
    if (takeover) await stores.replication?.putDocument(TAKEOVER_DOCUMENT, JSON.stringify(takeover));
  } finally {
    await stores.journal.close();
  }
}

/**
 * "took over from <box>" to the self-monitoring recipient, through the normal escalation. One alert
 * per takeover (its epoch in the dedup key): an earlier takeover's page still open in the journal
 * must not swallow this one, or the admin would read the old direction of the swap.
 */
async function pageTakeover(
  gateway: Gateway,
  settings: Settings,
  takeover: {box: string; from: string; epoch: number},
  logger: Logger
) {
  const recipient = settings.self_monitoring.recipient;
  if (!recipient) {
    logger.warn("took over, and nobody is paged about it: self_monitoring.recipient is empty");
    return;
  }
  await gateway.services.notifications.send(
    {
      recipient_uuid: recipient,
      message: `Klaxon: ${takeover.box} took over from ${takeover.from}, which stopped answering`,
      priority: settings.self_monitoring.priority,
      source: "klaxon",
      dedup_key: `klaxon:takeover:epoch-${takeover.epoch}`
    },
    SYSTEM_ACTOR
  );
}
