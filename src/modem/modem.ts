import {EventEmitter} from "node:events";
import {PeriodicTask} from "../lib/periodic-task.js";
import type {DialOutcome, KeyWait} from "./call-tracker.js";
import type {ModemHealth, ModemState} from "./health.js";
import {LineLock} from "./line-lock.js";
import {ModemCalls} from "./modem-calls.js";
import {ModemLink} from "./modem-link.js";
import {resolveSettings, type ModemOptions, type ModemSettings} from "./modem-options.js";
import {ModemSim} from "./modem-sim.js";
import {ModemSms, type SentSmsPart, type SmsStorage} from "./modem-sms.js";
import {profileByName, type ModemProfile} from "./profiles.js";
import {parseCmti, type StoredSms} from "./sms-codec.js";

export {ModemError, type ModemErrorCode} from "./modem-error.js";
export type {ModemOptions} from "./modem-options.js";

/** Events the modem emits for the channel driver and the dashboard. */
export interface ModemEvents {
  state: [state: ModemState];
  urc: [line: string];
  key: [key: string];
  /** A message arrived (+CMTI) and waits in storage at this index. */
  sms: [index: number];
  /** Someone calls the modem: their number (from +CLIP), or null when withheld or unknown. */
  incoming_call: [number: string | null];
}

/**
 * One GSM modem on one serial port, and the supervisor of its parts: the link (port, session,
 * reconnects, recovery), the SIM and initialisation run after every (re)open, calls and SMS,
 * which share one line. It routes URCs to them, runs the health loop and offers the few
 * operations the voice and SMS channels need.
 */
export class Modem extends EventEmitter<ModemEvents> {
  readonly profile: ModemProfile;
  private readonly settings: ModemSettings;
  private readonly healthTask: PeriodicTask;
  private readonly line = new LineLock();
  private readonly link: ModemLink;
  private readonly sim: ModemSim;
  private readonly calls: ModemCalls;
  private readonly sms: ModemSms;

  constructor(options: ModemOptions) {
    super();
    const {clock, logger} = options;
    const profile = typeof options.profile === "string" ? profileByName(options.profile) : options.profile;
    const settings = resolveSettings(options);
    this.profile = profile;
    this.settings = settings;
    this.link = new ModemLink(
      {path: options.path, lock: options.lock, profile, settings, logger},
      {
        opened: () => {
          this.sim.freshModule();
          return this.sim.initialise();
        },
        moduleReset: () => this.sim.freshModule(),
        lost: () => this.calls.endCall("modem_disconnected"),
        urc: (line) => this.onUrc(line),
        stateChanged: (state) => this.emit("state", state)
      }
    );
    const link = this.link;
    this.sim = new ModemSim({link, profile, settings, clock, logger, pin: options.pin, urcPort: options.urcPort});
    const watchUrcs = (listener: (line: string) => void) => {
      this.on("urc", listener);
      return () => void this.off("urc", listener);
    };
    const incoming = (number: string | null) => void this.emit("incoming_call", number);
    this.calls = new ModemCalls({
      link,
      line: this.line,
      capabilities: this.sim,
      profile,
      settings,
      logger,
      watchUrcs,
      incoming
    });
    this.sms = new ModemSms({link, line: this.line, capabilities: this.sim, settings});
    this.healthTask = new PeriodicTask("modem-health", settings.healthIntervalMs, () => this.healthPass(), logger);
  }

  get state(): ModemState {
    return this.link.state;
  }

  /** Opens the port and starts the health loop; a missing device is retried, not thrown. */
  async start(): Promise<void> {
    await this.link.start();
    this.healthTask.start();
  }

  async stop(): Promise<void> {
    this.link.stopping();
    await this.healthTask.stop();
    this.calls.endCall("modem_stopped");
    this.sms.stop();
    await this.link.close("modem stopped");
  }

  /** One health pass, as the loop runs it; tests call it directly. */
  tick(): Promise<void> {
    return this.healthTask.tick();
  }

  health(): ModemHealth {
    const sim = this.sim.status();
    return {
      profile: this.profile.name,
      state: this.link.state,
      port_open: this.link.portOpen,
      device: this.link.device,
      port_held_by: this.link.portHolders,
      sim: sim.sim,
      registration: sim.registration,
      operator: sim.operator,
      signal: sim.signal,
      capabilities: sim.capabilities,
      consecutive_timeouts: this.link.consecutiveTimeouts,
      last_error: this.link.lastError,
      checked_at: sim.checked_at
    };
  }

  /** Resolves with the state once it is `state`, or at once if it already is. */
  waitForState(state: ModemState): Promise<void> {
    if (this.link.state === state) return Promise.resolve();
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
  dial(number: string, ringTimeoutMs = this.settings.ringTimeoutMs, signal?: AbortSignal): Promise<DialOutcome> {
    return this.calls.dial(number, ringTimeoutMs, signal);
  }

  /** Speaks `text` to the far end and resolves when the modem reports the speech done. */
  speak(text: string): Promise<void> {
    return this.calls.speak(text);
  }

  /** The first key pressed since the call was answered that nobody has taken yet. */
  waitForKey(timeoutMs: number): Promise<KeyWait> {
    return this.calls.waitForKey(timeoutMs);
  }

  /** Ends the current call, if any; safe to call twice or after the far end hung up. */
  hangUp(): Promise<void> {
    return this.calls.hangUp();
  }

  /** See ModemCalls.answerIncoming: true once the ringing call is connected. */
  answerIncoming(signal?: AbortSignal): Promise<boolean> {
    return this.calls.answerIncoming(signal);
  }

  /** Turns the ringing call away without answering it. */
  rejectIncoming(): Promise<void> {
    return this.calls.rejectIncoming();
  }

  /** Ends the answered incoming call, if any. */
  hangUpIncoming(): Promise<void> {
    return this.calls.hangUpIncoming();
  }

  /** True while a call or an SMS operation holds the line. */
  get lineBusy(): boolean {
    return this.line.busy;
  }

  /** See ModemSms.sendSms: one message (concatenated parts in PDU mode), each part's report when asked for. */
  sendSms(number: string, text: string, signal?: AbortSignal): Promise<SentSmsPart[]> {
    return this.sms.sendSms(number, text, signal);
  }

  /** True in PDU mode: a long text goes as one concatenated message instead of numbered parts. */
  get smsConcatenates(): boolean {
    return this.sms.concatenates;
  }

  /** Used and total slots of the SIM's message storage; null when the modem will not say. */
  smsStorage(signal?: AbortSignal): Promise<SmsStorage | null> {
    return this.sms.storage(signal);
  }

  /** Every message in storage (replies that came while the gateway was down included). */
  listMessages(signal?: AbortSignal): Promise<StoredSms[]> {
    return this.sms.listMessages(signal);
  }

  /** The message at `index`, or null when that slot is empty. */
  readMessage(index: number, signal?: AbortSignal): Promise<StoredSms | null> {
    return this.sms.readMessage(index, signal);
  }

  deleteMessage(index: number, signal?: AbortSignal): Promise<void> {
    return this.sms.deleteMessage(index, signal);
  }

  private async healthPass(): Promise<void> {
    const link = this.link;
    if (link.stopped || !link.sessionOpen || this.calls.inProgress) return;
    link.checkPortHolders();
    // Calls and SMS come first: the pass runs only on a free line (nothing else has to be put back,
    // such as the UCS2 charset an SMS read sets) and gives it up between commands when asked.
    await this.line.ifIdle(async (wanted) => {
      const unlessWanted = (error: unknown) => {
        if (!wanted.aborted) link.recordError(error);
      };
      if (!link.initialised) {
        await this.sim.initialise();
      } else {
        await this.sim.probe().catch(unlessWanted);
        await this.sim.queryHealth(wanted).catch(unlessWanted);
      }
      if (!wanted.aborted) await link.recover();
    });
  }

  private onUrc(line: string): void {
    this.emit("urc", line);
    if (this.sms.receiveStatusReport(line)) return;
    const smsIndex = parseCmti(line);
    if (smsIndex !== null) {
      this.emit("sms", smsIndex);
      return;
    }
    const key = this.profile.parseKey(line);
    if (key !== null) {
      this.emit("key", key);
      this.calls.receiveKey(key);
      return;
    }
    this.calls.receiveCallSignal(line);
    this.sim.receiveRegistration(line);
  }
}
