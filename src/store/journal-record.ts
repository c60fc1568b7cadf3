import {existsSync, statSync} from "node:fs";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import type {ConfigStore, JournalRecord} from "./config/config-store.js";
import {Journal, type JournalCloseListener, type JournalOptions} from "./journal/journal.js";
import {isDamage} from "./journal/storage-errors.js";
import {JournalRefusedError, readIdentity, sealCommits, type JournalIdentity} from "./journal/journal-identity.js";
import {OPEN_MARKER_SUFFIX} from "./journal/wal-guard.js";
import {quickCheckOffThread} from "./journal/quick-check.js";

/** The one flag that starts on a journal the record does not vouch for, and adopts it. */
export const ACCEPT_JOURNAL_LOSS = "--accept-journal-loss";
/** How often a running gateway seals its commits and records the count: an older copy is told apart within this. */
export const SEAL_INTERVAL_MS = 60_000;
/** How long a start waits for `quick_check` before it serves (about 200 MB of journal on a busy box); a bigger journal's check ends while serving. */
export const QUICK_CHECK_WAIT_MS = 2000;

/**
 * `quick_check` at start, off the main thread: damage it finds within QUICK_CHECK_WAIT_MS is
 * returned (the start refuses); found later, it latches the journal damaged (/readyz 503, one reason).
 */
export async function checkPagesAtStart(journal: Journal, path: string, logger: Logger): Promise<string | null> {
  const check = quickCheckOffThread(path).catch((error: unknown) => {
    logger.warn("journal quick_check could not run", {journal: path, error: error as Error});
    return null;
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<"waited">((resolve) => (timer = setTimeout(() => resolve("waited"), QUICK_CHECK_WAIT_MS)));
  const first = await Promise.race([check, waited]);
  clearTimeout(timer);
  if (first !== "waited") return first;
  logger.info("journal quick_check goes on while serving: the journal is big", {journal: path});
  void check.then((found) => found && journal.markDamaged(`quick_check: ${found}`));
  return null;
}

export interface JournalRecordOptions {
  logger: Logger;
  /** Serve from the journal found, whatever the record says, and adopt it (main's `--accept-journal-loss`). */
  acceptJournalLoss?: boolean;
  /** The WAL guard was told to serve without a lost WAL (`--accept-wal-loss`): another id or fewer commits follow from that. */
  acceptWalLoss?: boolean;
}

/** What the files said before the journal opened: the record, and the findings so far. */
export interface OpenEvidence {
  journalPath: string;
  configPath: string;
  record: JournalRecord | null;
  findings: string[];
  /** The journal file was missing or empty: whatever opens in its place is new, so its id says nothing more. */
  fileLost: boolean;
  /** The WAL guard's case (its marker present, the WAL not): it speaks and decides about that. */
  walGuardLoss: boolean;
}

/**
 * Keeps the config store's record of the journal (docs/operations.md, "The journal's identity").
 * The journal holds an id made with it and its commits as of its last seal; the config store holds
 * the same pair and whether a gateway has it open. Before the journal opens, a record beside a
 * missing or empty journal, or marked open (no clean stop) beside a journal whose WAL and `-open`
 * marker are both gone (`rm journal.sqlite-*`), refuses the start; once it is open, another id
 * (a journal from elsewhere) or fewer commits (an older copy) does, and so does damage `quick_check`
 * finds. Crash safety: the record is written only after the commits it names are durable (a seal
 * is a journal commit, awaited), so a journal that is fine never holds fewer; it is marked open
 * once serving (and at start when it existed), and closed only once the WAL has been folded in.
 */
export class JournalRecordKeeper implements JournalCloseListener {
  private sealedAt: number;
  private recorded: JournalRecord | null;
  private started = false;
  private readonly task: PeriodicTask;

  private constructor(
    private readonly journal: Journal,
    private readonly config: ConfigStore,
    private readonly logger: Logger,
    /** As of the last seal (only seals change it): what a record after the close names. */
    private sealed: JournalIdentity
  ) {
    this.sealedAt = journal.stats.commits;
    this.recorded = config.data.journal ?? null;
    this.task = new PeriodicTask("journal-seal", SEAL_INTERVAL_MS, () => this.tick(), logger);
  }

  /** Opens the journal at `journalOptions.path` as the record allows (see the class); refused starts throw JournalRefusedError. */
  static async open(
    journalOptions: JournalOptions,
    config: {path: string; store: ConfigStore},
    options: JournalRecordOptions
  ): Promise<{journal: Journal; journalRecord: JournalRecordKeeper}> {
    const evidence = JournalRecordKeeper.beforeOpen(journalOptions.path, config, options);
    let journal: Journal;
    try {
      journal = new Journal(journalOptions);
    } catch (error) {
      // Not even its header reads: nothing can serve from it, accepted or not.
      if (!isDamage(error)) throw error;
      evidence.findings.push(`${journalOptions.path} is damaged (${(error as Error).message})`);
      throw refusal(evidence);
    }
    const journalRecord = await JournalRecordKeeper.attach(journal, config.store, evidence, options);
    return {journal, journalRecord};
  }

  /** Before the journal opens (SQLite would make a missing file anew): refuses what the files alone show. */
  private static beforeOpen(
    journalPath: string,
    config: {path: string; store: ConfigStore},
    options: JournalRecordOptions
  ): OpenEvidence {
    const record = config.store.data.journal ?? null;
    const wal = `${journalPath}-wal`;
    const walGuardLoss = existsSync(journalPath + OPEN_MARKER_SUFFIX) && !existsSync(wal);
    const findings: string[] = [];
    const fileLost = record !== null && (!existsSync(journalPath) || statSync(journalPath).size === 0);
    if (fileLost) findings.push(`${journalPath} is ${existsSync(journalPath) ? "empty (0 bytes)" : "missing"}`);
    else if (record?.open && !walGuardLoss && !existsSync(wal))
      findings.push(
        `${journalPath} was not closed cleanly and ${wal} is missing, with its ${OPEN_MARKER_SUFFIX} marker: alerts committed since the last checkpoint lived there`
      );
    const evidence = {journalPath, configPath: config.path, record, findings, fileLost, walGuardLoss};
    if (findings.length && !options.acceptJournalLoss) throw refusal(evidence);
    return evidence;
  }

  /**
   * Once the journal is open: checks its id, commits and pages against the record, then takes the
   * record over. A refused start closes the journal before it throws.
   */
  private static async attach(
    journal: Journal,
    config: ConfigStore,
    evidence: OpenEvidence,
    options: JournalRecordOptions
  ): Promise<JournalRecordKeeper> {
    const {record, findings, journalPath} = evidence;
    let own: JournalIdentity;
    try {
      const damage = await checkPagesAtStart(journal, journalPath, options.logger);
      if (damage) findings.push(`${journalPath} is damaged (quick_check: ${damage})`);
      own = readIdentityNow(journal);
    } catch (error) {
      await journal.close().catch(() => undefined);
      if (!isDamage(error)) throw error;
      findings.push(`${journalPath} is damaged (${(error as Error).message})`);
      throw refusal(evidence);
    }
    // A lost WAL the WAL guard was told to accept may have held the identity itself (a journal never
    // checkpointed): what opens is what remains, whatever its id and count.
    const walLossAccepted = evidence.walGuardLoss && options.acceptWalLoss;
    if (record && !evidence.fileLost && !walLossAccepted) {
      if (record.id !== own.id)
        findings.push(
          `${journalPath} is not the journal this config store was last used with (its id is ${own.id}): one from another data dir`
        );
      else if (own.commits < record.commits)
        findings.push(
          `${journalPath} is older than the one this config store last saw (it holds ${own.commits} commits): a copy taken earlier`
        );
    }
    if (findings.length && !options.acceptJournalLoss) {
      await journal.close();
      throw refusal(evidence);
    }
    if (findings.length)
      options.logger.error(`serving from the journal as it is, and adopting it, as ${ACCEPT_JOURNAL_LOSS} asked`, {
        journal: journalPath,
        accepted: findings,
        recorded: record,
        adopted: own
      });
    const keeper = new JournalRecordKeeper(journal, config, options.logger, own);
    journal.listenToClose(keeper);
    // A journal the record vouched for existed before this start: no failed start will remove it.
    if (record && !findings.length) await keeper.record(true);
    return keeper;
  }

  /** Once serving: the record names this journal, marked open, and the seals begin. */
  async start(): Promise<void> {
    this.started = true;
    await this.tick();
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** One seal: the commits since the last one counted into the journal, then the count recorded (open). */
  async tick(): Promise<void> {
    if (!(await this.seal())) return;
    if (!this.recorded?.open || this.sealed.commits !== this.recorded.commits) await this.record(true);
  }

  async beforeClose(): Promise<void> {
    await this.task.stop();
    await this.seal();
  }

  /** The WAL holds nothing the file lacks: the record may say closed. Never the first record (a start that failed before serving may yet remove a new journal). */
  async closedCleanly(): Promise<void> {
    if (this.started || this.recorded) await this.record(false);
  }

  // The seal is a journal commit, awaited until durable: the count recorded after it is never ahead
  // of the file. A seal or a record that fails (a full disk) is logged and tried again at the next:
  // the record guards the journal, it must never stop paging.
  private async seal(): Promise<boolean> {
    const commits = this.journal.stats.commits - this.sealedAt;
    try {
      if (commits > 0) await this.journal.write((db) => sealCommits(db, commits));
      // The seal's own commit (and any made meanwhile) is not counted: an idle box then seals nothing.
      this.sealedAt = this.journal.stats.commits;
      this.sealed = readIdentityNow(this.journal);
      return true;
    } catch (error) {
      this.logger.error("could not seal the journal's commit count", {error: error as Error});
      return false;
    }
  }

  private async record(open: boolean): Promise<void> {
    const record = {id: this.sealed.id, commits: this.sealed.commits, open};
    try {
      await this.config.recordJournal(record);
      this.recorded = record;
    } catch (error) {
      this.logger.error("could not record the journal in the config store", {error: error as Error, record});
    }
  }
}

function readIdentityNow(journal: Journal) {
  const identity = journal.read(readIdentity);
  if (!identity) throw new Error("journal has no identity row");
  return identity;
}

function refusal(evidence: OpenEvidence): JournalRefusedError {
  const {record, findings, configPath} = evidence;
  const saw = record
    ? `the config store ${configPath} last saw journal ${record.id} with ${record.commits} commits${record.open ? ", still open (no clean stop since)" : ""}`
    : `the config store is ${configPath}`;
  return new JournalRefusedError(
    `journal refused: ${findings.join("; ")}; ${saw}. Put the journal that belongs here back (or restore a backup with klaxon-admin restore), or start once with ${ACCEPT_JOURNAL_LOSS} to serve from the journal as it is and adopt it (docs/operations.md, "The journal's identity")`
  );
}
