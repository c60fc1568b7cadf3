import type {Logger} from "../lib/logger.js";
import {callResultCode} from "./at-parser.js";
import {AtCommandError, type AtSession} from "./at-session.js";
import {CallTracker, type DialOutcome, type KeyWait} from "./call-tracker.js";
import {parseIncomingSignal, type IncomingSignal} from "./caller-id.js";
import type {LineLock} from "./line-lock.js";
import {assertDialable, ModemError} from "./modem-error.js";
import type {AtLink} from "./modem-link.js";
import type {ModemSettings} from "./modem-options.js";
import type {Capabilities} from "./modem-sim.js";
import {splitSpeech, type ModemProfile} from "./profiles.js";

/** What the calls part works with. */
export interface ModemCallsContext {
  link: AtLink;
  /** Shared with SMS: a call holds it from the dial to the confirmed end. */
  line: LineLock;
  capabilities: Capabilities;
  profile: ModemProfile;
  settings: ModemSettings;
  logger: Logger;
  /** Every URC the modem emits, for as long as the returned function has not been called. */
  watchUrcs(listener: (line: string) => void): () => void;
  /** Someone is calling the modem (once per ringing call): their number, or null when not known. */
  incoming(number: string | null): void;
}

// RING repeats every few seconds while a call comes in; this long without one, the caller gave up.
const RING_GAP_MS = 10_000;

/**
 * Voice calls, one at a time: dial (answered only when call state says so), speech, keys,
 * hang-up, and the +CLCC check that the line is really free before the next call. A call coming
 * in is announced once (with the caller's number from +CLIP) and answered or rejected on request;
 * an answered one holds the line like a dialled one, so a page waits for it instead of failing.
 */
export class ModemCalls {
  private call: CallTracker | null = null;
  // The call that ended last, for the keys pressed just before it did; forgotten at the next call.
  private lastCall: CallTracker | null = null;
  private ringing: {announced: boolean; rings: number; quiet: NodeJS.Timeout} | null = null;
  private releaseLineLock: (() => void) | null = null;
  private readonly releasing = new WeakMap<CallTracker, Promise<void>>();
  private callPoll: NodeJS.Timeout | null = null;

  constructor(private readonly context: ModemCallsContext) {}

  /** True from the dial until the call is forgotten (hung up and confirmed, or the link lost). */
  get inProgress(): boolean {
    return this.call !== null;
  }

  /** Dials `number` and resolves when the call is answered (from call state) or has failed. */
  async dial(number: string, ringTimeoutMs: number, signal?: AbortSignal): Promise<DialOutcome> {
    const {link, settings} = this.context;
    assertDialable(number);
    link.readySession();
    if (this.call && !this.call.incoming) throw new ModemError("call_in_progress");
    // An SMS operation may hold the line: the call waits for it (seconds), then keeps the line to its end.
    const release = await this.context.line.acquire(signal);
    let session: AtSession;
    try {
      session = link.readySession();
      if (this.call) throw new ModemError("call_in_progress");
    } catch (error) {
      release();
      throw error;
    }
    const call = new CallTracker(settings.callEndGraceMs);
    this.call = call;
    this.lastCall = null;
    this.releaseLineLock = release;
    // The hang-up itself happens below, where the line is also confirmed free.
    const ringTimer = setTimeout(() => call.fail("ring_timeout", "no_answer"), ringTimeoutMs);
    if (!this.context.capabilities.has("call_urcs")) this.startCallPoll(call);
    session.send(`ATD${number};`, {timeoutMs: settings.dialCommandTimeoutMs, callResultsAreFinal: true}).then(
      () => link.countOutcome(null),
      (error: unknown) => {
        const code =
          error instanceof AtCommandError && error.kind === "call_result" ? callResultCode(error.reason) : null;
        if (code) {
          call.signal({kind: "result", code});
        } else {
          link.countOutcome(error);
          // A closed session already recorded why (the port went away); keep that message.
          if (!(error instanceof AtCommandError && error.kind === "closed")) link.recordError(error);
          call.fail(dialFailureReason(error));
        }
      }
    );
    let outcome = await call.outcome;
    clearTimeout(ringTimer);
    if (outcome.result === "answered") {
      // Ended by the far end or the network: nothing left to hang up. A local hang-up releases the line itself.
      void call.whenEnded().then(() => {
        if (!this.releasing.has(call)) this.forgetCall(call);
      });
    } else {
      // Whatever ended the attempt, the modem's own call state may lag: hang up and make sure.
      await this.releaseLine(call);
      if (call.answeredLate) outcome = {result: "no_answer", reason: "answered_after_ring_timeout"};
    }
    this.context.logger.info("modem dial finished", {outcome: outcome.result, reason: outcome.reason});
    return outcome;
  }

  /** Speaks `text` to the far end and resolves when the modem reports the speech done. */
  async speak(text: string): Promise<void> {
    const profile = this.context.profile;
    this.activeCall();
    if (!this.context.capabilities.has("tts"))
      throw new ModemError("tts_unsupported", `${profile.name} firmware did not accept the TTS setup`);
    for (const piece of splitSpeech(text, profile.maxSpeechBytes)) await this.speakPiece(piece);
  }

  /**
   * The first key pressed since the call was answered that nobody has taken yet. A key pressed
   * just before the far end hung up still counts: "1" and a hang-up often arrive together.
   */
  waitForKey(timeoutMs: number): Promise<KeyWait> {
    const call = this.call ?? (this.lastCall?.hasQueuedKey ? this.lastCall : null);
    if (!call) return Promise.resolve({kind: "ended", reason: "no_call"});
    return call.waitForKey(timeoutMs);
  }

  /** Ends our dialled call, if any; safe to call twice or after the far end hung up. */
  async hangUp(): Promise<void> {
    const call = this.call;
    if (!call || call.incoming) return;
    call.fail("local_hangup");
    await this.releaseLine(call);
  }

  /**
   * Answers the call that is ringing (ATA) and resolves true once it is connected; false when
   * nothing rings any more, a dialled call took the line first, or the caller hung up meanwhile.
   */
  async answerIncoming(signal?: AbortSignal): Promise<boolean> {
    const {link, settings} = this.context;
    if (!this.ringing || this.call) return false;
    const release = await this.context.line.acquire(signal);
    if (!this.ringing || this.call || !link.sessionOpen) {
      release();
      return false;
    }
    this.ringEnded();
    const call = new CallTracker(settings.callEndGraceMs, true);
    this.call = call;
    this.lastCall = null;
    this.releaseLineLock = release;
    try {
      await link.run("ATA", {timeoutMs: settings.dialCommandTimeoutMs, callResultsAreFinal: true});
    } catch (error) {
      if (!(error instanceof AtCommandError && error.kind === "call_result")) link.recordError(error);
      call.fail("answer_failed");
      await this.releaseLine(call);
      return false;
    }
    call.signal({kind: "state", state: "active"});
    void call.whenEnded().then(() => {
      if (!this.releasing.has(call)) this.forgetCall(call);
    });
    return true;
  }

  /** Turns the ringing call away without answering it; nothing happens when nothing rings. */
  async rejectIncoming(): Promise<void> {
    const {link, profile} = this.context;
    if (!this.ringing || this.call) return;
    this.ringEnded();
    await link.run(profile.hangUpCommand).catch((error: unknown) => link.recordError(error));
  }

  /** Ends the answered incoming call, if any; safe to call after the caller hung up. */
  async hangUpIncoming(): Promise<void> {
    const call = this.call;
    if (!call?.incoming) return;
    call.fail("local_hangup");
    await this.releaseLine(call);
  }

  /** Ends the current call at once, without hanging up: the modem is gone or being stopped. */
  endCall(reason: string): void {
    this.ringEnded();
    const call = this.call;
    if (!call) return;
    call.fail(reason);
    this.forgetCall(call);
  }

  /** A key the far end pressed (DTMF URC). */
  receiveKey(key: string): void {
    this.call?.key(key);
  }

  /** A URC that may carry call state or a call result for the current call, or a call coming in. */
  receiveCallSignal(line: string): void {
    const incoming = parseIncomingSignal(line);
    if (incoming) return this.receiveIncoming(incoming);
    const signal = this.context.profile.parseCallSignal(line);
    if (signal && this.call) this.call.signal(signal);
    // The caller hung up while it still rang.
    else if (signal?.kind === "result" && this.ringing) this.ringEnded();
  }

  private receiveIncoming(signal: IncomingSignal): void {
    if (signal.kind === "gone") return this.ringEnded();
    // While a call holds the line the network offers the caller as a waiting call: left alone.
    if (this.call) return;
    if (this.ringing) clearTimeout(this.ringing.quiet);
    const ringing = {
      announced: this.ringing?.announced ?? false,
      rings: (this.ringing?.rings ?? 0) + (signal.kind === "ring" ? 1 : 0),
      quiet: setTimeout(() => this.ringEnded(), RING_GAP_MS)
    };
    this.ringing = ringing;
    // With caller id on, the +CLIP right after the RING names the caller: wait for it, but a
    // second RING without one means none is coming, and the caller counts as unknown.
    const clipDue = signal.kind === "ring" && ringing.rings < 2 && this.context.capabilities.has("caller_id");
    if (ringing.announced || clipDue) return;
    ringing.announced = true;
    this.context.logger.info("modem: incoming call", {
      caller_known: signal.kind === "caller" && signal.number !== null
    });
    this.context.incoming(signal.kind === "caller" ? signal.number : null);
  }

  private ringEnded(): void {
    if (this.ringing) clearTimeout(this.ringing.quiet);
    this.ringing = null;
  }

  private async speakPiece(text: string): Promise<void> {
    const {profile, settings} = this.context;
    const call = this.activeCall();
    const command = profile.speakCommand(text);
    const donePrefix = profile.speechDonePrefix;
    const done = donePrefix ? this.waitForUrc(donePrefix, settings.speechTimeoutMs, call) : null;
    try {
      await this.context.link.run(command, {label: command.split("=")[0]});
    } catch (error) {
      done?.cancel();
      throw error;
    }
    await done?.promise;
  }

  private startCallPoll(call: CallTracker): void {
    const {link, profile, settings} = this.context;
    const poll = async () => {
      this.callPoll = null;
      if (this.call !== call || call.ended) return;
      try {
        const response = await link.run("AT+CLCC", {prefixes: ["+CLCC:"]});
        const signals = response.lines.map((line) => profile.parseCallSignal(line)).filter((signal) => signal !== null);
        // smstools3's rule: a call that was listed and is now absent has ended.
        if (signals.length === 0 && call.seen) call.signal({kind: "state", state: "ended"});
        for (const signal of signals) call.signal(signal);
      } catch (error) {
        link.recordError(error);
      }
      if (this.call === call && !call.ended) this.callPoll = setTimeout(() => void poll(), settings.callPollMs);
    };
    this.callPoll = setTimeout(() => void poll(), settings.callPollMs);
  }

  private activeCall(): CallTracker {
    const call = this.call;
    if (!call || !call.active) throw new ModemError("no_active_call");
    return call;
  }

  private waitForUrc(prefix: string, timeoutMs: number, call: CallTracker): {promise: Promise<void>; cancel(): void} {
    let cancel = () => {};
    const promise = new Promise<void>((resolve) => {
      const timer = setTimeout(() => cancel(), timeoutMs);
      const unwatch = this.context.watchUrcs((line) => {
        if (line.startsWith(prefix)) cancel();
      });
      cancel = () => {
        clearTimeout(timer);
        unwatch();
        resolve();
      };
      void call.whenEnded().then(() => cancel());
    });
    return {promise, cancel: () => cancel()};
  }

  /**
   * Hangs up and confirms with +CLCC that no call is left before the line is free again. Until
   * then the ended call still owns call-state URCs, so a late "active" (answered just as the ring
   * timeout fired) or a late "disconnect" cannot be taken for the next call's.
   */
  private releaseLine(call: CallTracker): Promise<void> {
    const existing = this.releasing.get(call);
    if (existing) return existing;
    const {link, profile, settings} = this.context;
    const work = (async () => {
      for (let attempt = 0; attempt < 3 && link.sessionOpen; attempt += 1) {
        await link.run(profile.hangUpCommand).catch((error: unknown) => link.recordError(error));
        const listed = await link.run("AT+CLCC", {prefixes: ["+CLCC:"]}).catch((error: unknown) => {
          link.recordError(error);
          return null;
        });
        const live = listed?.lines.some((line) => {
          const signal = profile.parseCallSignal(line);
          return signal?.kind === "state" && signal.state !== "ended";
        });
        if (!live) break;
        await new Promise((resolve) => setTimeout(resolve, settings.callPollMs));
      }
      this.forgetCall(call);
    })();
    this.releasing.set(call, work);
    return work;
  }

  private forgetCall(call: CallTracker): void {
    if (this.call !== call) return;
    this.call = null;
    this.lastCall = call;
    if (this.callPoll) clearTimeout(this.callPoll);
    this.callPoll = null;
    this.releaseLineLock?.();
    this.releaseLineLock = null;
  }
}

// Short, stable reasons for the attempt record; the full modem answer goes to last_error.
function dialFailureReason(error: unknown): string {
  if (!(error instanceof AtCommandError)) return "dial_failed";
  if (error.kind === "closed") return "modem_disconnected";
  if (error.kind === "timeout") return "dial_timeout";
  if (error.kind === "cme" || error.kind === "cms")
    return error.code !== null ? `${error.kind}_${error.code}` : error.reason;
  return "dial_error";
}
