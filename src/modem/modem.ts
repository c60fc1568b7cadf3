import {EventEmitter} from "node:events";
import {existsSync, watch, type FSWatcher} from "node:fs";
import {basename, dirname} from "node:path";
import type {SerialPort} from "serialport";
import type {Clock} from "../lib/clock.js";
import {isoTimestamp} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import {callResultCode} from "./at-parser.js";
import {AtCommandError, AtSession, type AtCommandOptions, type AtResponse} from "./at-session.js";
import {CallTracker, type DialOutcome, type KeyWait} from "./call-tracker.js";
import {bestRegistration, parseCpin, parseCsq, parseOperator, parseRegistration, simStateForCme, type ModemHealth, type ModemState, type Registration, type SimState} from "./health.js";
import {LineLock} from "./line-lock.js";
import {profileByName, splitSpeech, type Capability, type ModemProfile, type ProfileName} from "./profiles.js";
import {parseCmgl, parseCmgr, parseCmti, SINGLE_SMS_LIMIT, smsEncodingFor, smsLength, ucs2Hex, type StoredSms} from "./sms-codec.js";
import {SmsStatusReports, type SmsDeliveryReport} from "./sms-status-reports.js";

/** Everything the modem needs; durations in ms, defaults from PROTOCOLS 1.7 and section 2. */
export interface ModemOptions {
  /** Serial device, ideally a stable `/dev/serial/by-id/...-if02-port0` path. */
  path: string;
  profile: ProfileName | ModemProfile;
  clock: Clock;
  logger: Logger;
  baudRate?: number;
  /** Entered at most once per open, and never again after the SIM rejected it. */
  pin?: string;
  /** Quectel only: the port URCs go to (`usbat`, `usbmodem`, `uart1`); empty leaves the module's choice. */
  urcPort?: string;
  /** Advisory flock on the device (serialport's default); tests on a pty may turn it off. */
  lock?: boolean;
  commandTimeoutMs?: number;
  /** ATD itself: with COLP=0 the OK comes at once, but some firmware waits for the network. */
  dialCommandTimeoutMs?: number;
  /** How long a call may ring before we give up and report no_answer. */
  ringTimeoutMs?: number;
  /** +CLCC polling interval when the modem does not report call state by itself. */
  callPollMs?: number;
  /** See CallTracker: wait this long after "call ended" for the result code that names the cause. */
  callEndGraceMs?: number;
  /** Upper bound for speech to finish (the done URC) after the speak command's OK. */
  speechTimeoutMs?: number;
  /** Second phase of AT+CMGS: the network round trip after the text and Ctrl-Z. */
  smsSendTimeoutMs?: number;
  /** How long a sent SMS waits for its status report (+CDS) before the wait ends without one. */
  smsReportTimeoutMs?: number;
  healthIntervalMs?: number;
  /** Consecutive command timeouts that trigger first a re-open, then `AT+CFUN=1,1`. */
  maxConsecutiveTimeouts?: number;
  /** Delays between re-open attempts after the device disappeared; the last one repeats. */
  reconnectDelaysMs?: number[];
}

/** Failures of the high-level operations that are not a modem answer. */
export type ModemErrorCode = "not_ready" | "call_in_progress" | "no_active_call" | "invalid_number" | "tts_unsupported" | "sms_too_long";

/** Raised by the high-level operations when they cannot even be attempted. */
export class ModemError extends Error {
  constructor(
    readonly code: ModemErrorCode,
    message: string = code
  ) {
    super(message);
    this.name = "ModemError";
  }
}

/** Events the modem emits for the channel driver and the dashboard. */
export interface ModemEvents {
  state: [state: ModemState];
  urc: [line: string];
  key: [key: string];
  /** A message arrived (+CMTI) and waits in storage at this index. */
  sms: [index: number];
}

const DEFAULTS = {
  baudRate: 115200,
  commandTimeoutMs: 5000,
  dialCommandTimeoutMs: 20000,
  ringTimeoutMs: 60000,
  callPollMs: 1000,
  callEndGraceMs: 500,
  speechTimeoutMs: 60000,
  smsSendTimeoutMs: 60000,
  // A phone that is off gets the message when it comes back; after an hour the page has moved on.
  smsReportTimeoutMs: 3_600_000,
  healthIntervalMs: 10000,
  maxConsecutiveTimeouts: 3,
  reconnectDelaysMs: [500, 1000, 2000, 5000, 10000]
};

// E.164 or a national number; nothing that could end the ATD string or start another command.
const NUMBER = /^\+?[0-9]{3,20}$/;

/**
 * One GSM modem on one serial port: opens it, applies the profile's init sequence after every
 * (re)open, enters the SIM PIN once, watches health, re-opens when the device comes back, and
 * offers the few operations the voice and SMS channels need.
 */
export class Modem extends EventEmitter<ModemEvents> {
  readonly profile: ModemProfile;
  private readonly settings: typeof DEFAULTS;
  private readonly healthTask: PeriodicTask;
  private readonly statusReports: SmsStatusReports;
  private port: SerialPort | null = null;
  private deviceWatcher: FSWatcher | null = null;
  private session: AtSession | null = null;
  private currentState: ModemState = "stopped";
  private initialised = false;
  private capabilities = new Set<Capability>();
  private call: CallTracker | null = null;
  private readonly line = new LineLock();
  private releaseLineLock: (() => void) | null = null;
  private readonly releasing = new WeakMap<CallTracker, Promise<void>>();
  private callPoll: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private stopped = true;
  private timeoutStreak = 0;
  // 0: nothing done yet; 1: re-opened; 2: AT+CFUN=1,1 sent. Cleared by any answer.
  private recoveryStage = 0;
  private pinRejected = false;
  private pinEnteredThisOpen = false;
  private snapshot = {
    sim: "unknown" as SimState,
    creg: "unknown" as Registration,
    cereg: "unknown" as Registration,
    operator: null as string | null,
    signal: {rssi: null as number | null, dbm: null as number | null},
    lastError: null as string | null,
    checkedAt: null as string | null
  };

  constructor(private readonly options: ModemOptions) {
    super();
    this.profile = typeof options.profile === "string" ? profileByName(options.profile) : options.profile;
    this.settings = {...DEFAULTS, ...definedOnly(options)};
    this.healthTask = new PeriodicTask("modem-health", this.settings.healthIntervalMs, () => this.healthPass(), options.logger);
    this.statusReports = new SmsStatusReports(this.settings.smsReportTimeoutMs);
  }

  get state(): ModemState {
    return this.currentState;
  }

  /** Opens the port and starts the health loop; a missing device is retried, not thrown. */
  async start(): Promise<void> {
    this.stopped = false;
    try {
      await this.open();
    } catch (error) {
      this.recordError(error);
      this.scheduleReconnect();
    }
    this.healthTask.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.healthTask.stop();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.endCall("modem_stopped");
    this.statusReports.stop();
    await this.closePort("modem stopped");
    this.setState("stopped");
  }

  /** One health pass, as the loop runs it; tests call it directly. */
  tick(): Promise<void> {
    return this.healthTask.tick();
  }

  health(): ModemHealth {
    return {
      profile: this.profile.name,
      state: this.currentState,
      port_open: this.port?.isOpen === true,
      sim: this.snapshot.sim,
      registration: bestRegistration(this.snapshot.creg, this.snapshot.cereg),
      operator: this.snapshot.operator,
      signal: {...this.snapshot.signal},
      capabilities: [...this.capabilities].sort(),
      consecutive_timeouts: this.timeoutStreak,
      last_error: this.snapshot.lastError,
      checked_at: this.snapshot.checkedAt
    };
  }

  /** Resolves with the state once it is `state`, or at once if it already is. */
  waitForState(state: ModemState): Promise<void> {
    if (this.currentState === state) return Promise.resolve();
    return new Promise((resolve) => {
      const listener = (next: ModemState) => {
        if (next !== state) return;
        this.off("state", listener);
        resolve();
      };
      this.on("state", listener);
    });
  }

  /** Dials `number` and resolves when the call is answered (from call state) or has failed. */
  async dial(number: string, ringTimeoutMs = this.settings.ringTimeoutMs, signal?: AbortSignal): Promise<DialOutcome> {
    if (!NUMBER.test(number)) throw new ModemError("invalid_number", "number must be digits with an optional leading +");
    this.readySession();
    if (this.call) throw new ModemError("call_in_progress");
    // An SMS operation may hold the line: the call waits for it (seconds), then keeps the line to its end.
    const release = await this.line.acquire(signal);
    let session: AtSession;
    try {
      session = this.readySession();
      if (this.call) throw new ModemError("call_in_progress");
    } catch (error) {
      release();
      throw error;
    }
    const call = new CallTracker(this.settings.callEndGraceMs);
    this.call = call;
    this.releaseLineLock = release;
    // The hang-up itself happens below, where the line is also confirmed free.
    const ringTimer = setTimeout(() => call.fail("ring_timeout", "no_answer"), ringTimeoutMs);
    if (!this.capabilities.has("call_urcs")) this.startCallPoll(call);
    session.send(`ATD${number};`, {timeoutMs: this.settings.dialCommandTimeoutMs, callResultsAreFinal: true}).then(() => this.countOutcome(null), (error: unknown) => {
      const code = error instanceof AtCommandError && error.kind === "call_result" ? callResultCode(error.reason) : null;
      if (code) {
        call.signal({kind: "result", code});
      } else {
        this.countOutcome(error);
        // A closed session already recorded why (the port went away); keep that message.
        if (!(error instanceof AtCommandError && error.kind === "closed")) this.recordError(error);
        call.fail(dialFailureReason(error));
      }
    });
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
    this.options.logger.info("modem dial finished", {outcome: outcome.result, reason: outcome.reason});
    return outcome;
  }

  /** Speaks `text` to the far end and resolves when the modem reports the speech done. */
  async speak(text: string): Promise<void> {
    this.activeCall();
    if (!this.capabilities.has("tts")) throw new ModemError("tts_unsupported", `${this.profile.name} firmware did not accept the TTS setup`);
    for (const piece of splitSpeech(text, this.profile.maxSpeechBytes)) await this.speakPiece(piece);
  }

  private async speakPiece(text: string): Promise<void> {
    const call = this.activeCall();
    const command = this.profile.speakCommand(text);
    const donePrefix = this.profile.speechDonePrefix;
    const done = donePrefix ? this.waitForUrc(donePrefix, this.settings.speechTimeoutMs, call) : null;
    try {
      await this.run(command, {label: command.split("=")[0]});
    } catch (error) {
      done?.cancel();
      throw error;
    }
    await done?.promise;
  }

  /** The first key pressed since the call was answered that nobody has taken yet. */
  waitForKey(timeoutMs: number): Promise<KeyWait> {
    const call = this.call;
    if (!call) return Promise.resolve({kind: "ended", reason: "no_call"});
    return call.waitForKey(timeoutMs);
  }

  /** Ends the current call, if any; safe to call twice or after the far end hung up. */
  async hangUp(): Promise<void> {
    const call = this.call;
    if (!call) return;
    call.fail("local_hangup");
    await this.releaseLine(call);
  }

  /** True while a call or an SMS operation holds the line. */
  get lineBusy(): boolean {
    return this.line.busy;
  }

  /**
   * Sends one text-mode SMS with the two-phase AT+CMGS, in GSM-7 (through the IRA charset) when
   * the text allows, else UCS-2; resolves with the message reference and, when the modem takes
   * status reports, the network's later report on it (null: none requested). Waits for a call to end.
   */
  async sendSms(number: string, text: string, signal?: AbortSignal): Promise<{messageRef: number | null; report: Promise<SmsDeliveryReport | null> | null}> {
    if (!NUMBER.test(number)) throw new ModemError("invalid_number", "number must be digits with an optional leading +");
    // Ctrl-Z would send early and ESC would abort: neither may appear inside the text.
    const clean = text.replace(/[\x1a\x1b]/g, "");
    const encoding = smsEncodingFor(clean);
    if (smsLength(clean, encoding) > SINGLE_SMS_LIMIT[encoding]) throw new ModemError("sms_too_long", `${encoding} text longer than one SMS (${SINGLE_SMS_LIMIT[encoding]})`);
    return this.withSmsCharset(encoding === "gsm7" ? "IRA" : "UCS2", signal, async () => {
      // first octet 17 (SMS-SUBMIT, relative validity), plus 32 (TP-SRR) to ask for a status report
      // where the modem passes them on; validity 167 (one day), pid 0, dcs 0 GSM-7 or 8 UCS-2
      const reported = this.capabilities.has("sms_status_reports");
      await this.run(`AT+CSMP=${reported ? 49 : 17},167,0,${encoding === "gsm7" ? 0 : 8}`);
      const address = encoding === "gsm7" ? number : ucs2Hex(number);
      const payload = encoding === "gsm7" ? clean : ucs2Hex(clean);
      const response = await this.run(`AT+CMGS="${address}"`, {prefixes: ["+CMGS:"], payload, payloadTimeoutMs: this.settings.smsSendTimeoutMs});
      const match = /^\+CMGS:\s*(\d+)/.exec(response.lines[0] ?? "");
      const messageRef = match ? Number(match[1]) : null;
      return {messageRef, report: reported && messageRef !== null ? this.statusReports.expect(messageRef) : null};
    });
  }

  /** Every message in storage (replies that came while the gateway was down included). */
  listMessages(signal?: AbortSignal): Promise<StoredSms[]> {
    return this.withSmsCharset("UCS2", signal, async () => {
      const options = {prefixes: ["+CMGL:"], bodyLines: 1};
      // 27.007 says string parameters follow AT+CSCS; some firmware takes "ALL" anyway, some only its UCS-2 hex.
      const response = await this.run('AT+CMGL="ALL"', options).catch((error: unknown) => {
        if (!(error instanceof AtCommandError) || (error.kind !== "error" && error.kind !== "cms")) throw error;
        return this.run(`AT+CMGL="${ucs2Hex("ALL")}"`, options);
      });
      return parseCmgl(response.lines);
    });
  }

  /** The message at `index`, or null when that slot is empty. */
  readMessage(index: number, signal?: AbortSignal): Promise<StoredSms | null> {
    return this.withSmsCharset("UCS2", signal, async () => parseCmgr(index, (await this.run(`AT+CMGR=${index}`, {prefixes: ["+CMGR:"], bodyLines: 1})).lines));
  }

  async deleteMessage(index: number, signal?: AbortSignal): Promise<void> {
    await this.line.with(async () => {
      this.readySession();
      await this.run(`AT+CMGD=${index}`);
    }, signal);
  }

  // Holds the line, sets the charset the operation is written in, and puts IRA back for ATD and TTS.
  private withSmsCharset<T>(charset: "IRA" | "UCS2", signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    return this.line.with(async () => {
      this.readySession();
      await this.run(`AT+CSCS="${charset}"`);
      try {
        return await work();
      } finally {
        if (charset !== "IRA") await this.run('AT+CSCS="IRA"').catch((error: unknown) => this.recordError(error));
      }
    }, signal);
  }

  private async open(): Promise<void> {
    this.setState("opening");
    // Loaded on first use: a gateway without a modem never needs the serial port library.
    const {SerialPort} = await import("serialport");
    const port = new SerialPort({path: this.options.path, baudRate: this.settings.baudRate, lock: this.options.lock ?? true, autoOpen: false});
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    const session = new AtSession(port, this.settings.commandTimeoutMs, this.profile.urcPrefixes);
    this.port = port;
    this.session = session;
    this.initialised = false;
    this.pinEnteredThisOpen = false;
    port.on("close", (error?: Error & {disconnected?: boolean}) => this.onPortClosed(port, error));
    port.on("error", (error: Error & {code?: string}) => {
      this.recordError(error);
      // Writing to a hung-up tty fails with EIO: the device is gone even if no close came.
      if (error.code === "EIO") this.onDeviceGone(port);
    });
    this.watchDevice(port);
    session.on("urc", (line) => this.onUrc(line));
    this.options.logger.info("modem port open", {path: this.options.path, profile: this.profile.name});
    await this.initialise();
  }

  private async initialise(): Promise<void> {
    try {
      for (const command of ["ATE0", "AT+CMEE=1", "AT+CMGF=1"]) await this.run(command);
      this.capabilities = new Set();
      const urcPort = this.options.urcPort;
      if (urcPort && this.profile.urcPortCommand) {
        await this.run(this.profile.urcPortCommand(urcPort)).catch((error: unknown) => {
          if (!(error instanceof AtCommandError) || error.kind === "timeout" || error.kind === "closed") throw error;
          this.options.logger.info("modem refused the URC port setting", {port: urcPort, error: error.message});
        });
      }
      for (const step of this.profile.init) {
        try {
          await this.run(step.command);
          if (step.capability) this.capabilities.add(step.capability);
        } catch (error) {
          if (!step.optional || !(error instanceof AtCommandError) || error.kind === "timeout" || error.kind === "closed") throw error;
          this.options.logger.info("modem optional init command refused", {command: step.command, error: error.message});
        }
      }
      this.initialised = true;
      // Registration and signal right away: availability should not wait for the first health pass.
      await this.queryHealth().catch((error: unknown) => {
        if (!(error instanceof AtCommandError) || error.kind === "timeout" || error.kind === "closed") throw error;
        this.recordError(error);
      });
      this.setState("ready");
    } catch (error) {
      this.recordError(error);
      this.setState("unresponsive");
    }
  }

  private async checkSim(): Promise<void> {
    let sim: SimState;
    try {
      const response = await this.run("AT+CPIN?", {prefixes: ["+CPIN:"], timeoutMs: Math.max(this.settings.commandTimeoutMs, 1000)});
      sim = parseCpin(response.lines[0] ?? "");
    } catch (error) {
      if (!(error instanceof AtCommandError) || error.kind !== "cme") throw error;
      sim = simStateForCme(error.code);
    }
    if (sim === "pin_required") sim = await this.enterPin();
    if (sim === "ready") sim = await this.simInitialised();
    this.snapshot.sim = sim;
  }

  // Quectel answers READY before SMS storage is usable (PROTOCOLS 1.1): ask until it says so.
  private async simInitialised(): Promise<SimState> {
    const query = this.profile.simReadyQuery;
    if (!query) return "ready";
    try {
      const response = await this.run(query.command, {prefixes: [query.prefix]});
      return query.ready(response.lines[0] ?? "") ? "ready" : "initialising";
    } catch (error) {
      if (error instanceof AtCommandError && (error.kind === "error" || error.kind === "cme")) return "ready";
      throw error;
    }
  }

  // Once per open, never after a rejection: three wrong PINs lock the SIM behind its PUK.
  private async enterPin(): Promise<SimState> {
    const pin = this.options.pin;
    if (this.pinRejected) return "sim_pin_rejected";
    if (!pin || this.pinEnteredThisOpen) return "pin_required";
    this.pinEnteredThisOpen = true;
    try {
      await this.run(`AT+CPIN="${pin}"`, {label: "AT+CPIN=<pin>"});
      this.options.logger.info("modem SIM PIN accepted");
      return "ready";
    } catch (error) {
      if (error instanceof AtCommandError && error.kind === "cme" && error.code === 16) {
        this.pinRejected = true;
        this.snapshot.lastError = "SIM rejected the configured PIN; not retrying";
        this.options.logger.error("modem SIM PIN rejected; fix the PIN and restart (it will not be retried)");
        return "sim_pin_rejected";
      }
      throw error;
    }
  }

  private async healthPass(): Promise<void> {
    // A call or an SMS operation holds the line (and maybe the UCS2 charset): health can wait.
    if (this.stopped || !this.session || this.session.closed || this.call || this.line.busy) return;
    if (!this.initialised) {
      await this.initialise();
    } else {
      await this.run("AT").catch((error: unknown) => this.recordError(error));
      await this.queryHealth().catch((error: unknown) => this.recordError(error));
    }
    await this.recover();
  }

  private async queryHealth(): Promise<void> {
    const csq = await this.run("AT+CSQ", {prefixes: ["+CSQ:"]});
    this.snapshot.signal = parseCsq(csq.lines[0] ?? "") ?? {rssi: null, dbm: null};
    const creg = await this.run("AT+CREG?", {prefixes: ["+CREG:"]});
    this.snapshot.creg = parseRegistration(creg.lines[0] ?? "") ?? "unknown";
    // 2G modules have no CEREG: an ERROR there only means "no LTE registration".
    const cereg = await this.run("AT+CEREG?", {prefixes: ["+CEREG:"]}).catch((error: unknown) => {
      if (error instanceof AtCommandError && (error.kind === "timeout" || error.kind === "closed")) throw error;
      return null;
    });
    this.snapshot.cereg = cereg ? (parseRegistration(cereg.lines[0] ?? "") ?? "unknown") : "unknown";
    const cops = await this.run("AT+COPS?", {prefixes: ["+COPS:"]});
    this.snapshot.operator = parseOperator(cops.lines[0] ?? "");
    await this.checkSim();
    this.snapshot.checkedAt = isoTimestamp(this.options.clock.now());
  }

  // PROTOCOLS section 2, lesson 4: re-open first, then reset the module, then report it dead.
  private async recover(): Promise<void> {
    if (this.timeoutStreak < this.settings.maxConsecutiveTimeouts) return;
    if (this.recoveryStage === 0) {
      this.recoveryStage = 1;
      this.timeoutStreak = 0;
      this.options.logger.warn("modem not answering; re-opening the port");
      await this.closePort("re-open after timeouts");
      try {
        await this.open();
      } catch (error) {
        this.recordError(error);
        this.scheduleReconnect();
      }
    } else if (this.recoveryStage === 1) {
      this.recoveryStage = 2;
      this.timeoutStreak = 0;
      this.options.logger.warn("modem still not answering after re-open; resetting it with AT+CFUN=1,1");
      this.initialised = false;
      this.pinEnteredThisOpen = false;
      await this.run("AT+CFUN=1,1", {timeoutMs: Math.max(this.settings.commandTimeoutMs, 1000)}).catch((error: unknown) => this.recordError(error));
    } else if (this.currentState !== "unresponsive") {
      this.options.logger.error("modem unresponsive after re-open and reset");
      this.setState("unresponsive");
    }
  }

  private async run(command: string, options: AtCommandOptions = {}): Promise<AtResponse> {
    const session = this.session;
    if (!session || session.closed) throw new ModemError("not_ready", "modem port is not open");
    try {
      const response = await session.send(command, options);
      this.countOutcome(null);
      return response;
    } catch (error) {
      this.countOutcome(error);
      throw error;
    }
  }

  // Counted here, not in the session, because the streak must survive a re-open.
  private countOutcome(error: unknown): void {
    if (error instanceof AtCommandError && error.kind === "timeout") {
      this.timeoutStreak += 1;
      return;
    }
    if (error instanceof AtCommandError && error.kind === "closed") return;
    if (error instanceof ModemError) return;
    this.timeoutStreak = 0;
    this.recoveryStage = 0;
    if (this.currentState === "unresponsive" && this.initialised) this.setState("ready");
  }

  private onUrc(line: string): void {
    this.emit("urc", line);
    if (this.statusReports.receive(line)) return;
    const smsIndex = parseCmti(line);
    if (smsIndex !== null) {
      this.emit("sms", smsIndex);
      return;
    }
    const call = this.call;
    const key = this.profile.parseKey(line);
    if (key !== null) {
      this.emit("key", key);
      call?.key(key);
      return;
    }
    const signal = this.profile.parseCallSignal(line);
    if (signal && call) call.signal(signal);
    const registration = parseRegistration(line);
    if (registration && line.startsWith("+CREG:")) this.snapshot.creg = registration;
  }

  private startCallPoll(call: CallTracker): void {
    const poll = async () => {
      this.callPoll = null;
      if (this.call !== call || call.ended) return;
      try {
        const response = await this.run("AT+CLCC", {prefixes: ["+CLCC:"]});
        const signals = response.lines.map((line) => this.profile.parseCallSignal(line)).filter((signal) => signal !== null);
        // smstools3's rule: a call that was listed and is now absent has ended.
        if (signals.length === 0 && call.seen) call.signal({kind: "state", state: "ended"});
        for (const signal of signals) call.signal(signal);
      } catch (error) {
        this.recordError(error);
      }
      if (this.call === call && !call.ended) this.callPoll = setTimeout(() => void poll(), this.settings.callPollMs);
    };
    this.callPoll = setTimeout(() => void poll(), this.settings.callPollMs);
  }

  private activeCall(): CallTracker {
    const call = this.call;
    if (!call || !call.active) throw new ModemError("no_active_call");
    return call;
  }

  private readySession(): AtSession {
    if (!this.session || this.session.closed || !this.initialised) throw new ModemError("not_ready", `modem is ${this.currentState}`);
    return this.session;
  }

  private waitForUrc(prefix: string, timeoutMs: number, call: CallTracker): {promise: Promise<void>; cancel(): void} {
    let cancel = () => {};
    const promise = new Promise<void>((resolve) => {
      const listener = (line: string) => {
        if (line.startsWith(prefix)) cancel();
      };
      const timer = setTimeout(() => cancel(), timeoutMs);
      cancel = () => {
        clearTimeout(timer);
        this.off("urc", listener);
        resolve();
      };
      this.on("urc", listener);
      void call.whenEnded().then(() => cancel());
    });
    return {promise, cancel: () => cancel()};
  }

  private async sendHangUp(): Promise<void> {
    await this.run(this.profile.hangUpCommand).catch((error: unknown) => this.recordError(error));
  }

  /**
   * Hangs up and confirms with +CLCC that no call is left before the line is free again. Until
   * then the ended call still owns call-state URCs, so a late "active" (answered just as the ring
   * timeout fired) or a late "disconnect" cannot be taken for the next call's.
   */
  private releaseLine(call: CallTracker): Promise<void> {
    const existing = this.releasing.get(call);
    if (existing) return existing;
    const work = (async () => {
      for (let attempt = 0; attempt < 3 && this.session && !this.session.closed; attempt += 1) {
        await this.sendHangUp();
        const listed = await this.run("AT+CLCC", {prefixes: ["+CLCC:"]}).catch((error: unknown) => {
          this.recordError(error);
          return null;
        });
        const live = listed?.lines.some((line) => {
          const signal = this.profile.parseCallSignal(line);
          return signal?.kind === "state" && signal.state !== "ended";
        });
        if (!live) break;
        await new Promise((resolve) => setTimeout(resolve, this.settings.callPollMs));
      }
      this.forgetCall(call);
    })();
    this.releasing.set(call, work);
    return work;
  }

  private endCall(reason: string): void {
    const call = this.call;
    if (!call) return;
    call.fail(reason);
    this.forgetCall(call);
  }

  private forgetCall(call: CallTracker): void {
    if (this.call !== call) return;
    this.call = null;
    if (this.callPoll) clearTimeout(this.callPoll);
    this.callPoll = null;
    this.releaseLineLock?.();
    this.releaseLineLock = null;
  }

  // serialport reports an unplug as `close` with err.disconnected, but a hung-up tty can also
  // answer reads with 0 bytes, which serialport retries forever without closing. The device node
  // (or its by-id link) disappearing is the other sign of an unplug, so both are watched.
  private watchDevice(port: SerialPort): void {
    this.deviceWatcher?.close();
    const name = basename(this.options.path);
    try {
      this.deviceWatcher = watch(dirname(this.options.path), (_event, changed) => {
        if (changed === name && !existsSync(this.options.path)) this.onDeviceGone(port);
      });
      this.deviceWatcher.on("error", () => this.deviceWatcher?.close());
    } catch (error) {
      this.recordError(error);
    }
  }

  private onDeviceGone(port: SerialPort): void {
    if (port !== this.port) return;
    const disconnected = Object.assign(new Error("device disappeared"), {disconnected: true});
    this.onPortClosed(port, disconnected);
    // Closing our fd also ends serialport's read loop on the hung-up tty.
    if (port.isOpen) port.close(() => {});
  }

  private onPortClosed(port: SerialPort, error?: Error & {disconnected?: boolean}): void {
    if (port !== this.port) return;
    this.deviceWatcher?.close();
    this.deviceWatcher = null;
    this.port = null;
    this.session?.close("modem disconnected");
    this.session = null;
    this.initialised = false;
    this.endCall("modem_disconnected");
    if (error?.disconnected) {
      this.snapshot.lastError = "modem disconnected";
      this.options.logger.warn("modem disconnected", {path: this.options.path});
    }
    if (!this.stopped) this.scheduleReconnect();
  }

  private async closePort(reason: string): Promise<void> {
    const port = this.port;
    const session = this.session;
    this.port = null;
    this.session = null;
    this.initialised = false;
    this.deviceWatcher?.close();
    this.deviceWatcher = null;
    session?.close(reason);
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.setState("reconnecting");
    const delays = this.settings.reconnectDelaysMs;
    const delay = delays[Math.min(this.reconnectAttempt, delays.length - 1)]!;
    this.reconnectAttempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.open().then(
        () => {
          this.reconnectAttempt = 0;
        },
        (error: unknown) => {
          this.recordError(error);
          this.scheduleReconnect();
        }
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  private setState(state: ModemState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    this.emit("state", state);
  }

  private recordError(error: unknown): void {
    this.snapshot.lastError = describe(error);
    this.options.logger.debug("modem error", {error: this.snapshot.lastError});
  }
}

// Short, stable reasons for the attempt record; the full modem answer goes to last_error.
function dialFailureReason(error: unknown): string {
  if (!(error instanceof AtCommandError)) return "dial_failed";
  if (error.kind === "closed") return "modem_disconnected";
  if (error.kind === "timeout") return "dial_timeout";
  if (error.kind === "cme" || error.kind === "cms") return error.code !== null ? `${error.kind}_${error.code}` : error.reason;
  return "dial_error";
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function definedOnly(options: ModemOptions): Partial<typeof DEFAULTS> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(DEFAULTS)) {
    const value = (options as unknown as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
