import {isoTimestamp, type Clock} from "../lib/clock.js";
import {StorageUnavailableError, type Journal} from "../store/journal/journal.js";
import type {EscalationsRepository} from "../store/journal/escalations.repository.js";

/** What the watchdog probe found; `failures` names each part that did not answer. */
export interface LivenessReport {
  alive: boolean;
  failures: string[];
}

/**
 * The runner aims its timer at the earliest stored wake-up, but sleeps at most 5 minutes at a
 * time (WakeTimer): after the wall clock jumps forward (a Raspberry Pi without a clock battery
 * syncing NTP at boot) a step may legitimately fire up to that late. Beyond it, the runner is stuck.
 */
export const RUNNER_STUCK_AFTER_MS = 6 * 60_000;

/** How late the most overdue step of a running escalation is, in ms (0 when none is overdue). */
export function escalationLagMs(journal: Journal, escalations: EscalationsRepository, nowMs: number): number {
  const earliest = journal.read(() => escalations.earliestDue());
  return earliest === null ? 0 : Math.max(0, nowMs - Date.parse(earliest));
}

/**
 * The watchdog's health probe. It is run from a timer on the event loop, so getting an answer
 * at all proves the loop turns. The journal must answer a probe commit within the timeout: a
 * failure for lack of storage is an answer (a restart cannot free the disk, and the gateway has
 * to stay up to report it), a hang is not. The escalation runner must not leave a due step
 * unfired for longer than RUNNER_STUCK_AFTER_MS, unless the journal cannot commit (then nothing can fire).
 */
export class LivenessProbe {
  constructor(
    private readonly journal: Journal,
    private readonly escalations: EscalationsRepository,
    private readonly clock: Clock,
    private readonly timeoutMs = 10_000
  ) {}

  async check(): Promise<LivenessReport> {
    const failures: string[] = [];
    const journalFailure = await this.probeJournal();
    if (journalFailure) failures.push(journalFailure);
    if (!journalFailure && !this.journal.isStorageFailing) {
      const lagMs = escalationLagMs(this.journal, this.escalations, this.clock.now());
      if (lagMs > RUNNER_STUCK_AFTER_MS)
        failures.push(`escalation runner: a due step is ${Math.round(lagMs / 1000)} s overdue`);
    }
    return {alive: failures.length === 0, failures};
  }

  private async probeJournal(): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(
        () => resolve(`journal: no answer to a probe commit within ${this.timeoutMs} ms`),
        this.timeoutMs
      );
    });
    const answer = this.journal.probe(isoTimestamp(this.clock.now())).then(
      () => null,
      (error: unknown) => (error instanceof StorageUnavailableError ? null : `journal: ${(error as Error).message}`)
    );
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
