import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {PeriodicTask} from "../../lib/periodic-task.js";

const WATCH_INTERVAL_MS = 1000;
const ANSWER_TIMEOUT_MS = 1000;

/** What the peer's /healthz says about it; a single box's says nothing of a role. */
export interface PeerAnswer {
  role: string | null;
  box: string | null;
  epoch: number | null;
  /** A standby's replication lag as it sees it (seconds); null from an active or before its first beacon. */
  lag_seconds: number | null;
}

/** Asks the peer's /healthz once: its answer, or null when it does not answer 200 within a second. */
export async function askPeer(peer: string): Promise<PeerAnswer | null> {
  try {
    const response = await fetch(new URL("/healthz", peer), {signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS)});
    if (response.status !== 200) return null;
    const body = (await response.json()) as Partial<PeerAnswer>;
    return {
      role: body.role ?? null,
      box: body.box ?? null,
      epoch: body.epoch ?? null,
      lag_seconds: body.lag_seconds ?? null
    };
  } catch {
    return null;
  }
}

/** What a watcher is told and asked on each look at the peer. */
export interface PeerWatchHooks {
  /** Called after every question, answered or not. */
  onPass?: () => void;
  /** Which answers show the peer doing its part; any answer at all, unless told otherwise. */
  counts?: (answer: PeerAnswer) => boolean;
}

/**
 * One box watching the other: its /healthz every second. `silentMs()` is how long since it last
 * gave an answer that `counts` (counted from the start when it never has), which decides the
 * standby's takeover and the active's alarm about a silent standby.
 */
export class PeerWatch {
  private lastAnswerAt: number;
  last: PeerAnswer | null = null;
  private readonly task: PeriodicTask;

  constructor(
    private readonly peer: string,
    private readonly clock: Clock,
    logger: Logger,
    {onPass = () => undefined, counts = () => true}: PeerWatchHooks = {}
  ) {
    this.lastAnswerAt = clock.now();
    this.task = new PeriodicTask(
      "peer-watch",
      WATCH_INTERVAL_MS,
      async () => {
        const answer = await askPeer(this.peer);
        if (answer) this.last = answer;
        if (answer && counts(answer)) this.lastAnswerAt = this.clock.now();
        onPass();
      },
      logger
    );
  }

  silentMs(): number {
    return this.clock.now() - this.lastAnswerAt;
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
