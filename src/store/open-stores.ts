import {existsSync, readFileSync, renameSync} from "node:fs";
import type {Settings} from "../settings/defaults.js";
import type {Logger} from "../lib/logger.js";
import {Journal} from "./journal/journal.js";
import {ReplicationRepository} from "./journal/replication.repository.js";
import {ConfigStore} from "./config/config-store.js";
import {CONFIG_DOCUMENT, JournalConfigDocument} from "./config/journal-config-document.js";
import {ACCEPT_JOURNAL_LOSS, checkPagesAtStart, JournalRecordKeeper} from "./journal-record.js";
import {JournalRefusedError} from "./journal/journal-identity.js";
import {loadAckLinkKey, newAckLinkKeyHex, parseAckLinkKey} from "./ack-link-key.js";

/** Where a file imported into the journal is moved, so nobody edits a copy that is no longer read. */
export const IMPORTED_SUFFIX = ".imported";
const ACK_LINK_KEY_DOCUMENT = "ack_link_key";

export interface StoreFiles {
  journal: string;
  config: string;
  ackLinkKey: string;
}

export interface Stores {
  journal: Journal;
  config: ConfigStore;
  ackLinkKey: Buffer;
  /** The replicated documents and the beacon; null on a single box (replication.role off). */
  replication: ReplicationRepository | null;
  /** The config store's record of the journal; null when two boxes replicate (the config lives in the journal). */
  journalRecord: JournalRecordKeeper | null;
}

export interface OpenStoresOptions {
  logger: Logger;
  /** Serve even though the journal's WAL was lost at an unclean stop (main's `--accept-wal-loss`, WalGuard). */
  acceptWalLoss?: boolean;
  /** Serve from a journal the config store's record does not vouch for, or that is damaged, and adopt it. */
  acceptJournalLoss?: boolean;
}

/**
 * Opens the journal, the config store and the ack-link key. On a single box as ever: the key file
 * first (a damaged one stops the start with nothing open), config.json, then the journal. When two
 * boxes replicate (docs/high-availability.md) the journal is the one source of truth: the config and
 * the key are documents in it, so Litestream ships them with the alerts. A config.json or key file
 * left from a single-box past is imported at the first such start and renamed `*.imported`.
 */
export async function openStores(settings: Settings, files: StoreFiles, options: OpenStoresOptions): Promise<Stores> {
  const journalOptions = {
    path: files.journal,
    logger: options.logger,
    checkpointIntervalMs: settings.journal.checkpoint_interval_ms,
    maxBatch: settings.journal.max_batch,
    acceptWalLoss: options.acceptWalLoss || options.acceptJournalLoss
  };
  if (settings.replication.role === "off") {
    const ackLinkKey = loadAckLinkKey(files.ackLinkKey);
    // A journal beside a missing config store means the store was lost, not that the data dir is new.
    const config = await ConfigStore.open(files.config, {dataBeside: [files.journal]});
    const {journal, journalRecord} = await JournalRecordKeeper.open(
      journalOptions,
      {path: files.config, store: config},
      options
    );
    return {journal, config, ackLinkKey, replication: null, journalRecord};
  }
  const journal = new Journal({...journalOptions, replicated: true});
  try {
    // Two boxes: the config store lives in this journal and cannot vouch for it; its pages can still be checked.
    const damage = await checkPagesAtStart(journal, files.journal, options.logger);
    if (damage && !options.acceptJournalLoss)
      throw new JournalRefusedError(
        `journal refused: ${files.journal} is damaged (quick_check: ${damage}). Restore a backup, or start once with ${ACCEPT_JOURNAL_LOSS} to serve from it as it is (docs/operations.md, "The journal's identity")`
      );
    const replication = new ReplicationRepository(journal);
    await importOnce(replication, {name: CONFIG_DOCUMENT, file: files.config}, options.logger, async (path) =>
      JSON.stringify((await ConfigStore.open(path)).data)
    );
    await importOnce(replication, {name: ACK_LINK_KEY_DOCUMENT, file: files.ackLinkKey}, options.logger, (path) =>
      Promise.resolve(parseAckLinkKey(readFileSync(path, "utf8"), path).toString("hex"))
    );
    const keyHex = await replication.addDocument(ACK_LINK_KEY_DOCUMENT, newAckLinkKeyHex());
    const ackLinkKey = parseAckLinkKey(keyHex, `journal document ${ACK_LINK_KEY_DOCUMENT}`);
    const config = await ConfigStore.openOn(
      new JournalConfigDocument(replication),
      `journal ${files.journal} (document ${CONFIG_DOCUMENT})`
    );
    return {journal, config, ackLinkKey, replication, journalRecord: null};
  } catch (error) {
    await journal.close();
    throw error;
  }
}

/** Copies `file` into the journal as `name` unless the journal already has it, then renames the file aside. */
async function importOnce(
  replication: ReplicationRepository,
  {name, file}: {name: string; file: string},
  logger: Logger,
  read: (path: string) => Promise<string>
): Promise<void> {
  if (!existsSync(file)) return;
  if (replication.document(name) === null) {
    await replication.addDocument(name, await read(file));
    logger.info("imported into the journal for replication", {file, document: name});
  } else {
    logger.warn("ignored: the journal already holds this, and the journal is what replicates", {file, document: name});
  }
  renameSync(file, file + IMPORTED_SUFFIX);
}
