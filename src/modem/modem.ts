import {EventEmitter} from "node:events";
import {existsSync, watch, type FSWatcher} from "node:fs";
import {basename, dirname} from "node:path";
import {SerialPort} from "serialport";
import type {Clock} from "../lib/clock.js";
import {isoTimestamp} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import {callResultCode} from "./at-parser.js";
import {AtCommandError, AtSession, type AtCommandOptions, type AtResponse} from "./at-session.js";
import {CallTracker, type DialOutcome, type KeyWait} from "./call-tracker.js";
import {bestRegistration, parseCpin, parseCsq, parseOperator, parseRegistration, simStateForCme, type ModemHealth, type ModemState, type Registration, type SimState} from "./health.js";
import {profileByName, type Capability, type ModemProfile, type ProfileName} from "./profiles.js";

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
  healthIntervalMs?: number;
  /** Consecutive command timeouts that trigger first a re-open, then `AT+CFUN=1,1`. */
  maxConsecutiveTimeouts?: number;
  /** Delays between re-open attempts after the device disappeared; the last one repeats. */
  reconnectDelaysMs?: number[];
}

/** Failures of the high-level operations that are not a modem answer. */
export type ModemErrorCode = "not_ready" | "call_in_progress" | "no_active_call" | "invalid_number" | "tts_unsupported";

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
  private port: SerialPort | null = null;
  private deviceWatcher: FSWatcher | null = null;
  private session: AtSession | null = null;
  private currentState: ModemState = "stopped";
  private initialised = false;
  private capabilities = new Set<Capability>();
  private call: CallTracker | null = null;
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
  async dial(number: string, ringTimeoutMs = this.settings.ringTimeoutMs): Promise<DialOutcome> {
    if (!NUMBER.test(number)) throw new ModemError("invalid_number", "number must be digits with an optional leading +");
    const session = this.readySession();
    if (this.call) throw new ModemError("call_in_progress");
    const call = new CallTracker(this.settings.callEndGraceMs);
    this.call = call;
    const ringTimer = setTimeout(() => {
      call.fail("ring_timeout", "no_answer");
      void this.sendHangUp();
    }, ringTimeoutMs);
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
    const outcome = await call.outcome;
    clearTimeout(ringTimer);
    if (outcome.result === "answered") {
      void call.whenEnded().then(() => this.forgetCall(call));
    } else {
      this.forgetCall(call);
      // After a dial error the modem's call state is unknown: make sure the line is free.
      if (outcome.result === "failed" && this.session && !this.session.closed) await this.sendHangUp();
    }
    this.options.logger.info("modem dial finished", {outcome: outcome.result, reason: outcome.reason});
    return outcome;
  }

  /** Speaks `text` to the far end and resolves when the modem reports the speech done. */
  async speak(text: string): Promise<void> {
    const call = this.activeCall();
    if (!this.capabilities.has("tts")) throw new ModemError("tts_unsupported", `${this.profile.name} firmware did not accept the TTS setup`);
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
    this.endCall("local_hangup");
    if (this.session && !this.session.closed) await this.sendHangUp();
  }

  /** Sends a text-mode SMS with the two-phase AT+CMGS; resolves with the message reference. */
  async sendSms(number: string, text: string): Promise<{messageRef: number | null}> {
    if (!NUMBER.test(number)) throw new ModemError("invalid_number", "number must be digits with an optional leading +");
    this.readySession();
    // Ctrl-Z would send early and ESC would abort: neither may appear inside the text.
    const payload = text.replace(/[\x1a\x1b]/g, "");
    const response = await this.run(`AT+CMGS="${number}"`, {prefixes: ["+CMGS:"], payload, payloadTimeoutMs: this.settings.smsSendTimeoutMs});
    const match = /^\+CMGS:\s*(\d+)/.exec(response.lines[0] ?? "");
    return {messageRef: match ? Number(match[1]) : null};
  }

  private async open(): Promise<void> {
    this.setState("opening");
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
      await this.checkSim();
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
    this.snapshot.sim = sim;
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
    if (this.stopped || !this.session || this.session.closed || this.call) return;
    if (!this.initialised) await this.initialise();
    else await this.run("AT").catch((error: unknown) => this.recordError(error));
    if (this.initialised) await this.queryHealth().catch((error: unknown) => this.recordError(error));
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
