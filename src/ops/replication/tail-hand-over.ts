import {readdirSync} from "node:fs";
import {basename, join} from "node:path";
import type {Logger} from "../../lib/logger.js";
import {isoTimestamp} from "../../lib/clock.js";
import {PeriodicTask} from "../../lib/periodic-task.js";
import {boxToken} from "../../lib/tokens.js";
import {tailBatches, type HandedNotification, type TakeoverRecord} from "../../domain/tail.js";
import {markHandedOver, openFormerJournal, type FormerJournal} from "../../store/journal/former-journal.js";
import {BACKUP_FILES} from "../backup-layout.js";

const RETRY_INTERVAL_MS = 2000;
const ANSWER_TIMEOUT_MS = 10_000;
/** A former active's own journal, moved aside when it came back to stand by (standby.ts). */
export const FORMER_JOURNAL_PREFIX = "former-journal-";
/**
 * How far before the newest beacon in the new active's copy the tail starts: a change stamped
 * before the beacon was committed before it (one writer, in order), so a second covers any clock step.
 */
const BEACON_MARGIN_MS = 1000;

/** What one pass did: handed over (or nothing to hand), or try again later. */
type Pass = "done" | "retry";

/**
 * The former active's side of "the tail comes home" (docs/high-availability.md): a box that comes
 * back to find the other serving with a higher epoch hands it, over the API, every alert,
 * acknowledgement and resolve in its own journal (kept aside in `former-journal-<time>/`) that
 * changed after the copy the other took over from. It retries while the other cannot be reached and
 * never serves the tail itself; a folder whose tail came home is marked and left alone.
 */
export class TailHandOver {
  private readonly task: PeriodicTask;
  private readonly pending = new Set<string>();
  private failures = 0;
  private lastReason = "";
  private lastFailure: string | null = null;

  constructor(
    private readonly peer: string,
    private readonly dataDir: string,
    private readonly logger: Logger
  ) {
    this.task = new PeriodicTask("tail-hand-over", RETRY_INTERVAL_MS, () => this.tick(), logger);
  }

  /** The folders whose tail has not come home yet. */
  waiting(): string[] {
    return [...this.pending];
  }

  /** What the standby's /readyz says while a tail waits; null once none does. */
  status(): {waiting: number; failures: number; last_failure: string | null} | null {
    if (!this.pending.size) return null;
    return {waiting: this.pending.size, failures: this.failures, last_failure: this.lastFailure};
  }

  /** One pass over every folder still waiting; resolves true once none is. */
  async tick(): Promise<boolean> {
    for (const folder of [...this.pending]) {
      const former = openFormerJournal(folder, BACKUP_FILES.journal);
      if (!former) {
        this.pending.delete(folder);
        continue;
      }
      try {
        if ((await this.handOver(folder, former)) === "done") this.pending.delete(folder);
      } finally {
        former.close();
      }
    }
    if (!this.pending.size) void this.task.stop();
    return this.pending.size === 0;
  }

  /** Finds the former journals in the data dir (moved aside before the box stood by) and hands them over. */
  start(): void {
    for (const name of readdirSync(this.dataDir))
      if (name.startsWith(FORMER_JOURNAL_PREFIX)) this.pending.add(join(this.dataDir, name));
    if (!this.pending.size) return;
    void this.tick();
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    if (this.pending.size)
      this.logger.error(
        "the tail of this box's former journal has not come home: kept, handed over at its next start",
        {
          folders: this.waiting()
        }
      );
  }

  private async handOver(folder: string, former: FormerJournal): Promise<Pass> {
    const {beacon, ackLinkKeyHex} = former;
    if (!beacon || !ackLinkKeyHex) {
      markHandedOver(folder, {skipped: "the journal holds no beacon or key: it never served as one of two boxes"});
      return "done";
    }
    const token = boxToken(ackLinkKeyHex);
    const asked = await this.ask(token, "GET", "/api/v1/replication/takeover");
    if (asked.kind === "retry") return "retry";
    const takeover = asked.body as TakeoverRecord | null;
    if (!takeover || takeover.from !== beacon.box || takeover.from_epoch !== beacon.epoch) {
      this.logger.error(
        "cannot tell what the active lacks of this box's former journal (it took over from another copy): kept for the operator",
        {folder, own: beacon, takeover}
      );
      return "done";
    }
    const since = isoTimestamp(Date.parse(takeover.copy_beacon_at) - BEACON_MARGIN_MS);
    const notifications = former.tail(since);
    const totals = {recovered: 0, applied: 0, present: 0, refused: [] as string[]};
    const {batches: cut, withoutIdempotency} = tailBatches(notifications);
    if (withoutIdempotency.length)
      this.logger.warn(
        "handing over alerts without their stored Idempotency-Key answer, too large to send with it: a retry of those sends will page again",
        {notifications: withoutIdempotency}
      );
    for (const [n, batch] of cut.entries()) {
      const sent = await this.send(token, {box: beacon.box, folder, last: n === cut.length - 1}, batch);
      if (sent.kind === "retry") return "retry";
      const outcome = sent.body as typeof totals;
      totals.recovered += outcome.recovered;
      totals.applied += outcome.applied;
      totals.present += outcome.present;
      totals.refused.push(...outcome.refused);
    }
    markHandedOver(folder, {to: this.peer, since, ...totals});
    this.logger.warn("handed the tail of this box's former journal to the active", {folder, to: this.peer, ...totals});
    return "done";
  }

  private send(
    token: string,
    {box, folder, last}: {box: string; folder: string; last: boolean},
    notifications: HandedNotification[]
  ) {
    return this.ask(token, "POST", "/api/v1/replication/tail", {
      from_box: box,
      hand_over: `${box}/${basename(folder)}`,
      notifications,
      last_batch: last
    });
  }

  /** One request to the active; "retry" when it does not answer 200 (down, still starting, standing by). */
  private async ask(
    token: string,
    method: string,
    path: string,
    body?: unknown
  ): Promise<{kind: "answered"; body: unknown} | {kind: "retry"}> {
    try {
      const response = await fetch(new URL(path, this.peer), {
        method,
        headers: {"X-Klaxon-Box-Token": token, ...(body === undefined ? {} : {"Content-Type": "application/json"})},
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS)
      });
      if (response.status === 404 && method === "GET") return {kind: "answered", body: null};
      if (response.status === 200) return {kind: "answered", body: await response.json()};
      this.noteFailure(`${method} ${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    } catch (error) {
      this.noteFailure(`${method} ${path}: ${(error as Error).message}`);
    }
    return {kind: "retry"};
  }

  private noteFailure(reason: string): void {
    this.lastFailure = reason;
    // Loud at the first failure, when the reason changes, and every minute after; not every two seconds.
    const changed = reason.replace(/:.*/, "") !== this.lastReason;
    this.lastReason = reason.replace(/:.*/, "");
    if (this.failures++ % 30 === 0 || changed)
      this.logger.warn("the active cannot take the tail of this box's former journal yet: keeping it, retrying", {
        peer: this.peer,
        reason,
        failures: this.failures
      });
  }
}
