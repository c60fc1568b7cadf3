import type {CallResultCode} from "./at-parser.js";
import type {CallSignal} from "./profiles.js";

export type DialResult = "answered" | "busy" | "no_answer" | "failed";

/** How a dial attempt ended; `reason` says why for anything but answered. */
export interface DialOutcome {
  result: DialResult;
  reason?: string;
}

/** What waiting for a key produced: a key, nothing in time, or the call being over. */
export type KeyWait = {kind: "key"; key: string} | {kind: "timeout"} | {kind: "ended"; reason: string};

type Phase = "dialing" | "alerting" | "active" | "ended";

/**
 * The state of one call (ours, or one we answered), fed with call signals and keys from whatever reports them
 * (URCs, polled +CLCC, result codes). "Answered" comes only from a call state saying active,
 * never from the OK after ATD, which with COLP=0 only means the dial was accepted.
 */
export class CallTracker {
  private phase: Phase = "dialing";
  private seenAlerting = false;
  private seenListed = false;
  private pendingEnd: NodeJS.Timeout | null = null;
  private settled = false;
  private endReason: string | null = null;
  private lateAnswer = false;
  private readonly keys: string[] = [];
  private keyWaiter: ((wait: KeyWait) => void) | null = null;
  private endWaiters: (() => void)[] = [];
  private resolveOutcome!: (outcome: DialOutcome) => void;
  /** Resolves once: answered, or how the attempt failed. */
  readonly outcome = new Promise<DialOutcome>((resolve) => (this.resolveOutcome = resolve));

  /**
   * @param endGraceMs how long an "ended" state waits for the result code (BUSY, NO ANSWER) that
   *   modems print just after it, so the outcome names the real cause.
   * @param incoming a call someone made to the modem (answered with ATA), rather than our dial.
   */
  constructor(
    private readonly endGraceMs: number,
    readonly incoming = false
  ) {}

  get active(): boolean {
    return this.phase === "active";
  }

  get ended(): boolean {
    return this.phase === "ended";
  }

  /** True once any call state has been reported: a polled list without our call then means it ended. */
  get seen(): boolean {
    return this.seenListed;
  }

  /** A key was pressed that nobody has taken yet. */
  get hasQueuedKey(): boolean {
    return this.keys.length > 0;
  }

  /** The far end picked up after we had given up ringing; the call was hung up regardless. */
  get answeredLate(): boolean {
    return this.lateAnswer;
  }

  signal(signal: CallSignal): void {
    if (this.phase === "ended") {
      if (this.endReason === "ring_timeout" && signal.kind === "state" && signal.state === "active")
        this.lateAnswer = true;
      return;
    }
    if (signal.kind === "result") {
      this.end(resultReason(signal.code), outcomeForResult(signal.code, this.seenAlerting));
      return;
    }
    this.seenListed = true;
    switch (signal.state) {
      case "dialing":
        return;
      case "alerting":
        this.seenAlerting = true;
        if (this.phase === "dialing") this.phase = "alerting";
        return;
      case "active":
      case "held":
        if (this.phase !== "active") {
          this.phase = "active";
          this.settle({result: "answered"});
        }
        return;
      case "ended":
        this.endSoon();
        return;
    }
  }

  key(key: string): void {
    if (this.phase !== "active") return;
    if (this.keyWaiter) this.keyWaiter({kind: "key", key});
    else this.keys.push(key);
  }

  /** Ends the call for a reason outside the call signals (hang-up, port lost, ring timeout). */
  fail(reason: string, result: DialResult = "failed"): void {
    if (this.phase !== "ended") this.end(reason, {result, reason});
  }

  /** The first key pressed since the answer that nobody has taken yet, else waits for one. */
  waitForKey(timeoutMs: number): Promise<KeyWait> {
    const queued = this.keys.shift();
    if (queued !== undefined) return Promise.resolve({kind: "key", key: queued});
    if (this.phase === "ended") return Promise.resolve({kind: "ended", reason: this.endReason ?? "ended"});
    if (this.keyWaiter) return Promise.reject(new Error("already waiting for a key"));
    return new Promise<KeyWait>((resolve) => {
      const timer = setTimeout(() => done({kind: "timeout"}), timeoutMs);
      const done = (wait: KeyWait) => {
        clearTimeout(timer);
        this.keyWaiter = null;
        resolve(wait);
      };
      this.keyWaiter = done;
    });
  }

  /** Resolves when the call is over, or at once if it already is. */
  whenEnded(): Promise<void> {
    if (this.phase === "ended") return Promise.resolve();
    return new Promise((resolve) => this.endWaiters.push(resolve));
  }

  private endSoon(): void {
    if (this.pendingEnd) return;
    this.pendingEnd = setTimeout(() => {
      this.pendingEnd = null;
      this.end(
        "remote_hangup",
        this.seenAlerting ? {result: "no_answer", reason: "not_answered"} : {result: "failed", reason: "call_ended"}
      );
    }, this.endGraceMs);
  }

  private end(reason: string, outcomeIfUnanswered: DialOutcome): void {
    if (this.pendingEnd) clearTimeout(this.pendingEnd);
    this.pendingEnd = null;
    const wasActive = this.phase === "active";
    this.phase = "ended";
    this.endReason = wasActive ? reason : (outcomeIfUnanswered.reason ?? reason);
    this.settle(outcomeIfUnanswered);
    this.keyWaiter?.({kind: "ended", reason: this.endReason});
    for (const waiter of this.endWaiters.splice(0)) waiter();
  }

  private settle(outcome: DialOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveOutcome(outcome);
  }
}

function resultReason(code: CallResultCode): string {
  return code.toLowerCase().replace(/ /g, "_");
}

function outcomeForResult(code: CallResultCode, seenAlerting: boolean): DialOutcome {
  switch (code) {
    case "BUSY":
      return {result: "busy", reason: "busy"};
    case "NO ANSWER":
      return {result: "no_answer", reason: "no_answer"};
    case "NO DIALTONE":
      return {result: "failed", reason: "no_dialtone"};
    case "NO CARRIER":
      // Unanswered calls often end in a bare NO CARRIER; after ringing that means no answer.
      return seenAlerting ? {result: "no_answer", reason: "no_carrier"} : {result: "failed", reason: "no_carrier"};
  }
}
