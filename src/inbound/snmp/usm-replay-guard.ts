import {TIME_WINDOW_SECONDS as WINDOW_SECONDS, type UsmStamp} from "./trap-types.js";

/** RFC 3414 §2.2.2: snmpEngineBoots stops at 2^31-1 (the engine then needs new keys). */
const MAX_BOOTS = 2 ** 31 - 1;

/** What the receiver believes of one authoritative engine (RFC 3414 §2.3, kept per engine ID). */
interface EngineNotion {
  boots: number;
  /** snmpEngineTime at `learnedAtMs`; it advances with our clock. */
  time: number;
  learnedAtMs: number;
  latestReceivedTime: number;
  /** Our own engine (informs): its notion is ours to set, never learned from a message. */
  own: boolean;
  /** Digests of messages let in while they are still inside the window, with their engine time. */
  digests: Map<string, number>;
}

/** How much the guard remembers: authentic engines and, per engine, digests of messages in the window. */
export interface ReplayGuardLimits {
  maxEngines: number;
  maxDigestsPerEngine: number;
}

const DEFAULT_LIMITS: ReplayGuardLimits = {maxEngines: 4096, maxDigestsPerEngine: 4096};

/**
 * The timeliness check of SNMPv3's user-based security model (RFC 3414 §3.2 step 7) for
 * authentic messages, so a captured trap cannot be sent again later:
 * - for a trap, the sender's engine is authoritative and we are not (step 7b): the first authentic
 *   message of an engine sets our notion of its snmpEngineBoots/Time, a later one with higher
 *   boots, or equal boots and a later time within the window, moves it on; a message with lower
 *   boots, or with equal boots and a time more than 150 s behind our notion (which advances with
 *   our clock), is refused;
 * - for an inform, our engine is authoritative (step 7a, boots and the window checked against our
 *   own engine's, here and by the parser, which answers a stale one with a report);
 * - beyond the RFC, an exact replay inside the window (the same HMAC) is refused too: a captured
 *   "power restored" sent again 10 s later would otherwise still pass.
 * State is in memory: a gateway restart forgets it, and the first message of each engine after a
 * restart is believed (as the RFC's non-authoritative receiver does). Time is given as a value.
 */
export class UsmReplayGuard {
  private readonly engines = new Map<string, EngineNotion>();

  constructor(
    own: {engineId: string; boots: number; startedAtMs: number},
    private readonly limits: ReplayGuardLimits = DEFAULT_LIMITS
  ) {
    this.engines.set(own.engineId, {
      boots: own.boots,
      time: 0,
      learnedAtMs: own.startedAtMs,
      latestReceivedTime: 0,
      own: true,
      digests: new Map()
    });
  }

  /** Null when the message is timely and new (and it is remembered); else why it is refused. */
  admit(stamp: UsmStamp, nowMs: number): string | null {
    const notion = this.engines.get(stamp.engineId);
    if (!notion) {
      this.learn(stamp, nowMs);
      return null;
    }
    const estimate = notion.time + Math.floor((nowMs - notion.learnedAtMs) / 1000);
    if (!notion.own && this.advances(notion, stamp, estimate)) {
      if (stamp.boots !== notion.boots) notion.digests.clear();
      Object.assign(notion, {boots: stamp.boots, time: stamp.time, learnedAtMs: nowMs, latestReceivedTime: stamp.time});
    }
    const engineTime = notion.time + Math.floor((nowMs - notion.learnedAtMs) / 1000);
    if (notion.boots >= MAX_BOOTS) return "SNMPv3 engine boots at their limit (RFC 3414: the keys must be changed)";
    if (stamp.boots !== notion.boots)
      return `SNMPv3 replay or stale message: engine boots ${stamp.boots}, expected ${notion.boots}`;
    if (stamp.time < engineTime - WINDOW_SECONDS || (notion.own && stamp.time > engineTime + WINDOW_SECONDS))
      return `SNMPv3 message outside the 150 s time window (engine time ${stamp.time}, expected about ${engineTime})`;
    if (notion.digests.has(stamp.digest)) return "SNMPv3 replay: the same message was already taken";
    this.remember(notion, stamp, engineTime);
    return null;
  }

  /** Engines whose time the guard tracks (for tests and metrics). */
  engineCount(): number {
    return this.engines.size;
  }

  /**
   * RFC 3414's update rule (higher boots, or equal boots and a time after the latest received),
   * with one more condition: with equal boots the time must also be inside the window of our
   * estimate. The RFC alone would take a captured message that never arrived, however old, as long
   * as it is newer than the last one that did (a UPS that traps twice a day); the cost is that a
   * sender silent for weeks whose clock runs 150 s slow against ours must reboot (new boots).
   */
  private advances(notion: EngineNotion, stamp: UsmStamp, estimate: number): boolean {
    if (stamp.boots !== notion.boots) return stamp.boots > notion.boots;
    return stamp.time > notion.latestReceivedTime && stamp.time >= estimate - WINDOW_SECONDS;
  }

  private learn(stamp: UsmStamp, nowMs: number): void {
    if (this.engines.size >= this.limits.maxEngines) {
      // Forget the engine learned longest ago (never our own): only authentic messages add engines.
      const oldest = [...this.engines].find(([, notion]) => !notion.own);
      if (oldest) this.engines.delete(oldest[0]);
    }
    const notion: EngineNotion = {
      boots: stamp.boots,
      time: stamp.time,
      learnedAtMs: nowMs,
      latestReceivedTime: stamp.time,
      own: false,
      digests: new Map()
    };
    this.engines.set(stamp.engineId, notion);
    this.remember(notion, stamp, stamp.time);
  }

  private remember(notion: EngineNotion, stamp: UsmStamp, engineTime: number): void {
    // A digest older than the window needs no memory: the window check refuses its message already.
    for (const [digest, time] of notion.digests) if (time < engineTime - WINDOW_SECONDS) notion.digests.delete(digest);
    if (notion.digests.size >= this.limits.maxDigestsPerEngine) {
      const first = notion.digests.keys().next();
      if (!first.done) notion.digests.delete(first.value);
    }
    notion.digests.set(stamp.digest, stamp.time);
  }
}
