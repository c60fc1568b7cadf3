import type {SimulatorLine} from "./modem-simulator-line.js";
import {addressType, isRegistered, type Dialect, type SimulatorScript} from "./modem-simulator-script.js";

interface SimCall {
  number: string;
  /** +CLCC <dir>: 0 dialled by the code under test, 1 a call coming in to the modem. */
  dir: 0 | 1;
  stat: number;
  timers: NodeJS.Timeout[];
  /** The caller's keys after each speech, for a call coming in; a dialled call follows `script.call`. */
  callerKeys?: string[];
}

/** Someone calling the modem: the keys they press after each speech; they hang up after the last speech listed when `hangUpAfterKeys`. */
export interface IncomingCaller {
  keys: string[];
  hangUpAfterKeys?: boolean;
  /** The network sends no +CLIP for this call, though caller id is on. */
  noCallerId?: boolean;
}

// How often RING (and +CLIP) repeat while a call comes in; real networks take 3-6 s.
const RING_INTERVAL_MS = 250;

// +CLCC <stat> to Quectel's ^DSCI numbering (see parseDsci).
const DSCI_STAT: Record<number, number> = {0: 3, 1: 1, 2: 2, 3: 7, 4: 4, 6: 6};

/**
 * The simulated modem's voice side, as `script.call` has the far end behave: ATD and the ring,
 * the outcome, call-state URCs (+CLCC or ^DSCI) or +CLCC polling, TTS with its done URC, the
 * callee's keys as DTMF URCs in each family's shape, and the hang-up.
 */
export class SimulatedCalls {
  private call: SimCall | null = null;
  private clccUrcs = false;
  private dsciUrcs = false;
  private callerId = false;
  private speechCount = 0;
  private hangUpAfterKeys = false;

  constructor(
    private readonly dialect: Dialect,
    private readonly line: SimulatorLine,
    private readonly script: SimulatorScript
  ) {}

  /** Settings a re-plugged or reset module has lost. */
  resetVolatile(): void {
    this.clccUrcs = false;
    this.dsciUrcs = false;
    this.callerId = false;
  }

  /** Commands every dialect shares for calls coming in (caller id, answering); false for others. */
  answerCommon(upper: string): boolean {
    if (upper === "AT+CLIP=1") {
      this.callerId = true;
      this.line.reply("OK");
    } else if (upper === "ATA") {
      this.answerIncoming();
    } else {
      return false;
    }
    return true;
  }

  /**
   * A call comes in from `number` (null: withheld): RING, with +CLIP after it once caller id is
   * on, repeated until the code under test answers or rejects it, or the caller hangs up.
   */
  ring(number: string | null, caller: IncomingCaller): void {
    if (this.call) throw new Error("the simulated line is busy");
    const call: SimCall = {number: number ?? "", dir: 1, stat: 4, timers: [], callerKeys: caller.keys};
    this.call = call;
    this.speechCount = 0;
    this.hangUpAfterKeys = caller.hangUpAfterKeys === true;
    const announce = () => {
      if (this.call !== call || call.stat !== 4) return;
      this.line.urc("RING");
      if (this.callerId && !caller.noCallerId)
        this.line.urc(`+CLIP: "${call.number}",${number ? addressType(number) : 128},"",0,"",${number ? 0 : 1}`);
      call.timers.push(setTimeout(announce, RING_INTERVAL_MS));
    };
    this.callState(call, 4);
    announce();
  }

  /** Someone calls while the line is in use: the network offers a waiting call, RING and +CLIP only. */
  ringWhileBusy(number: string): void {
    this.line.urc("RING");
    if (this.callerId) this.line.urc(`+CLIP: "${number}",${addressType(number)},"",0,"",0`);
  }

  /** The caller hangs up: while ringing the RINGs stop; once answered the modem reports the end. */
  callerHangsUp(): void {
    const call = this.call;
    if (!call || call.dir !== 1) return;
    const answered = call.stat === 0;
    this.endCall();
    if (answered) this.line.urc("NO CARRIER");
  }

  /** True while a call comes in or one that came in is connected. */
  get incomingCall(): {number: string; answered: boolean} | null {
    return this.call?.dir === 1 ? {number: this.call.number, answered: this.call.stat === 0} : null;
  }

  private answerIncoming(): void {
    const call = this.call;
    if (!call || call.dir !== 1 || call.stat !== 4) return this.line.reply("NO CARRIER");
    this.line.reply("OK");
    this.callState(call, 0);
    if (this.dialect === "sim7600") this.line.urc("VOICE CALL: BEGIN");
  }

  /** AT+CLCC: the call in progress, if any. */
  list(): void {
    this.line.reply(...(this.call ? [this.clccLine(this.call)] : []), "OK");
  }

  /** The dialect-specific call commands; false for any other command. */
  answer(upper: string): boolean {
    if (upper === "AT+CLCC=1") {
      this.clccUrcs = true;
      this.line.reply("OK");
    } else if (upper === "AT^DSCI=1") {
      this.dsciUrcs = true;
      this.line.reply("OK");
    } else if (upper.startsWith("AT+CTTS=2,") || upper.startsWith("AT+CTTS=1,") || upper.startsWith("AT+QWTTS=1,0,")) {
      this.speak(upper.startsWith("AT+QWTTS") ? "+QWTTS: 0" : "+CTTS: 0");
    } else if (upper === "ATH" || upper === "AT+CHUP") {
      this.hangUp();
    } else {
      return false;
    }
    return true;
  }

  dial(command: string): void {
    if (!isRegistered(this.script)) return this.line.reply("NO CARRIER");
    if (this.call) return this.line.reply("ERROR");
    const call: SimCall = {number: command.slice(3).replace(/;$/, ""), dir: 0, stat: 2, timers: []};
    this.call = call;
    this.speechCount = 0;
    this.line.reply("OK");
    this.callState(call, 2);
    const script = this.script.call;
    call.timers.push(setTimeout(() => this.callState(call, 3), Math.min(20, script.afterMs / 2)));
    if (script.outcome === "late_answer") return;
    call.timers.push(
      setTimeout(() => {
        if (script.outcome === "answer") {
          this.callState(call, 0);
          if (this.dialect === "sim7600") this.line.urc("VOICE CALL: BEGIN");
        } else {
          this.callState(call, 6);
          this.call = null;
          if (script.outcome === "busy") this.line.reply("BUSY");
          else if (this.dialect === "sim7600") this.line.reply("VOICE CALL: END: 000000", "NO CARRIER");
          else this.line.reply(this.dialect === "sim800" ? "NO ANSWER" : "NO CARRIER");
        }
      }, script.afterMs)
    );
  }

  /** Ends the call in progress; the far end hears of it only while the line is attached. */
  endCall(): void {
    const call = this.call;
    if (!call) return;
    for (const timer of call.timers) clearTimeout(timer);
    this.call = null;
    if (!this.line.attached) return;
    this.callState(call, 6);
    if (this.dialect === "sim7600") this.line.urc("VOICE CALL: END: 000005");
  }

  private hangUp(): void {
    // The callee picks up in the very moment our hang-up is on its way.
    if (this.call?.dir === 0 && this.script.call.outcome === "late_answer" && this.call.stat !== 0)
      this.callState(this.call, 0);
    this.line.reply("OK");
    this.endCall();
  }

  private speak(doneUrc: string): void {
    const call = this.call;
    if (!call || call.stat !== 0) return this.line.reply(this.dialect === "quectel" ? "+CME ERROR: 903" : "ERROR");
    this.line.reply("OK");
    const script = call.callerKeys ?? this.script.call.keys;
    const keys = script[this.speechCount] ?? "";
    this.speechCount += 1;
    const lastKeys = this.speechCount >= script.length;
    call.timers.push(
      setTimeout(() => {
        if (this.call !== call) return;
        this.line.urc(doneUrc);
        for (const key of keys) this.line.urc(this.dtmfUrc(key));
        if (call.dir === 1 && lastKeys && this.hangUpAfterKeys) this.callerHangsUp();
      }, 20)
    );
  }

  private dtmfUrc(key: string): string {
    if (this.dialect === "sim800") return `+DTMF: ${key}`;
    if (this.dialect === "sim7600") return `+RXDTMF: ${key}`;
    return `+QTONEDET: ${key.charCodeAt(0)}`;
  }

  private callState(call: SimCall, stat: number): void {
    call.stat = stat;
    if (this.clccUrcs) this.line.urc(this.clccLine(call));
    if (this.dsciUrcs)
      this.line.urc(`^DSCI: 1,${call.dir},${DSCI_STAT[stat]},0,${call.number},${addressType(call.number)}`);
  }

  private clccLine(call: SimCall): string {
    return `+CLCC: 1,${call.dir},${call.stat},0,0,"${call.number}",${addressType(call.number)}`;
  }
}
