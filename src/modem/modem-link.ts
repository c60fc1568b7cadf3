import {watch, type FSWatcher} from "node:fs";
import {basename, dirname} from "node:path";
import type {SerialPort} from "serialport";
import type {Logger} from "../lib/logger.js";
import {AtCommandError, AtSession, type AtCommandOptions, type AtResponse} from "./at-session.js";
import type {ModemState} from "./health.js";
import {ModemError} from "./modem-error.js";
import type {ModemSettings} from "./modem-options.js";
import {findPortHolders, resolveDevice, runningProcessesNamed, type PortHolder} from "./port-holders.js";
import type {ModemProfile} from "./profiles.js";

/**
 * The link as the SIM, call and SMS parts see it: commands on the current session and the
 * state they report into, never the port's lifetime.
 */
export interface AtLink {
  /** True while there is a session that can take a command. */
  readonly sessionOpen: boolean;
  /** The session, if the modem is open and initialised; else ModemError not_ready. */
  readySession(): AtSession;
  /** Sends one command on the current session and counts its outcome for recovery. */
  run(command: string, options?: AtCommandOptions): Promise<AtResponse>;
  /** Counts the outcome of a command sent on the session directly (ATD). */
  countOutcome(error: unknown): void;
  recordError(error: unknown): void;
  /** A problem worth showing as last_error that is not an exception (and not logged again). */
  reportProblem(message: string): void;
  markInitialised(): void;
  setState(state: ModemState): void;
}

/** What the link asks of its owner; it knows nothing of calls, SMS or the SIM. */
export interface LinkHooks {
  /** The port is open on a fresh session: bring the module up. The open waits for it. */
  opened(): Promise<void>;
  /** The module was restarted with AT+CFUN=1,1 and starts over as if newly opened. */
  moduleReset(): void;
  /** The port went away under us (unplugged, or the tty hung up). */
  lost(): void;
  urc(line: string): void;
  stateChanged(state: ModemState): void;
}

/** Where and how the link opens the port. */
export interface LinkOptions {
  path: string;
  lock?: boolean;
  profile: ModemProfile;
  settings: ModemSettings;
  logger: Logger;
}

/**
 * The serial port and its AT session: opens it, watches the device, re-opens after an unplug,
 * and recovers a modem that stopped answering (re-open, then reset, then report it dead).
 */
export class ModemLink implements AtLink {
  private port: SerialPort | null = null;
  private deviceWatcher: FSWatcher | null = null;
  private session: AtSession | null = null;
  private currentState: ModemState = "stopped";
  private sessionInitialised = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private isStopped = true;
  private timeoutStreak = 0;
  // 0: nothing done yet; 1: re-opened; 2: AT+CFUN=1,1 sent. Cleared by any answer.
  private recoveryStage = 0;
  private lastErrorMessage: string | null = null;
  // What `path` pointed at when the port was opened: a stable by-id link moves on re-enumeration.
  private openedDevice: string | null = null;
  private holders: PortHolder[] = [];

  constructor(
    private readonly options: LinkOptions,
    private readonly hooks: LinkHooks
  ) {}

  get state(): ModemState {
    return this.currentState;
  }

  /** True once the init sequence has run on this open (and the module was not reset since). */
  get initialised(): boolean {
    return this.sessionInitialised;
  }

  get sessionOpen(): boolean {
    return this.session !== null && !this.session.closed;
  }

  get portOpen(): boolean {
    return this.port?.isOpen === true;
  }

  get stopped(): boolean {
    return this.isStopped;
  }

  get consecutiveTimeouts(): number {
    return this.timeoutStreak;
  }

  get lastError(): string | null {
    return this.lastErrorMessage;
  }

  /** The device the port was opened on (`/dev/ttyUSB2` for a by-id path), or null before the first open. */
  get device(): string | null {
    return this.openedDevice;
  }

  /** Other processes found holding the port at the last look; see checkPortHolders. */
  get portHolders(): PortHolder[] {
    return this.holders.map((holder) => ({...holder}));
  }

  /**
   * Looks for other processes holding the device (ModemManager, a terminal program, a second
   * gateway): they send their own commands and take the modem's answers. Run at every open and
   * health pass. A root-owned holder is invisible to the unprivileged service, so a port too busy
   * to open, or a modem that stopped answering, is put down to ModemManager when one is running.
   */
  checkPortHolders(openError?: unknown): void {
    const {path, logger} = this.options;
    const device = resolveDevice(path);
    let holders = device ? findPortHolders(device) : [];
    if (holders.length === 0 && (isBusy(openError) || this.timeoutStreak > 0 || this.currentState === "unresponsive"))
      holders = runningProcessesNamed("ModemManager").map((pid) => ({pid, name: "ModemManager", suspected: true}));
    const names = (list: PortHolder[]) => list.map((holder) => `${holder.name} (pid ${holder.pid})`).join(", ");
    if (holders.length && names(holders) !== names(this.holders))
      logger.warn("modem port is held by another process", {path, device, held_by: names(holders)});
    else if (holders.length === 0 && this.holders.length)
      logger.info("modem port is no longer held by another process", {path});
    this.holders = holders;
  }

  /** Opens the port; a missing device is retried, not thrown. */
  async start(): Promise<void> {
    this.isStopped = false;
    try {
      await this.open();
    } catch (error) {
      this.openFailed(error);
    }
  }

  /** From here on nothing re-opens the port; `close` then shuts it. */
  stopping(): void {
    this.isStopped = true;
  }

  async close(reason: string): Promise<void> {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    await this.closePort(reason);
    this.setState("stopped");
  }

  readySession(): AtSession {
    if (!this.session || this.session.closed || !this.sessionInitialised)
      throw new ModemError("not_ready", `modem is ${this.currentState}`);
    return this.session;
  }

  async run(command: string, options: AtCommandOptions = {}): Promise<AtResponse> {
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
  countOutcome(error: unknown): void {
    if (error instanceof AtCommandError && error.kind === "timeout") {
      this.timeoutStreak += 1;
      return;
    }
    if (error instanceof AtCommandError && error.kind === "closed") return;
    if (error instanceof ModemError) return;
    this.timeoutStreak = 0;
    this.recoveryStage = 0;
    if (this.currentState === "unresponsive" && this.sessionInitialised) this.setState("ready");
  }

  markInitialised(): void {
    this.sessionInitialised = true;
  }

  // PROTOCOLS section 2, lesson 4: re-open first, then reset the module, then report it dead.
  async recover(): Promise<void> {
    if (this.timeoutStreak < this.options.settings.maxConsecutiveTimeouts) return;
    if (this.recoveryStage === 0) {
      this.recoveryStage = 1;
      this.timeoutStreak = 0;
      this.options.logger.warn("modem not answering; re-opening the port");
      await this.closePort("re-open after timeouts");
      try {
        await this.open();
      } catch (error) {
        this.openFailed(error);
      }
    } else if (this.recoveryStage === 1) {
      this.recoveryStage = 2;
      this.timeoutStreak = 0;
      this.options.logger.warn("modem still not answering after re-open; resetting it with AT+CFUN=1,1");
      this.sessionInitialised = false;
      this.hooks.moduleReset();
      await this.run("AT+CFUN=1,1", {timeoutMs: Math.max(this.options.settings.commandTimeoutMs, 1000)}).catch(
        (error: unknown) => this.recordError(error)
      );
    } else if (this.currentState !== "unresponsive") {
      this.options.logger.error("modem unresponsive after re-open and reset");
      this.setState("unresponsive");
    }
  }

  setState(state: ModemState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    this.hooks.stateChanged(state);
  }

  recordError(error: unknown): void {
    this.lastErrorMessage = error instanceof Error ? error.message : String(error);
    this.options.logger.debug("modem error", {error: this.lastErrorMessage});
  }

  reportProblem(message: string): void {
    this.lastErrorMessage = message;
  }

  private async open(): Promise<void> {
    this.setState("opening");
    // Loaded on first use: a gateway without a modem never needs the serial port library.
    const {SerialPort} = await import("serialport");
    const {path, profile, settings, logger} = this.options;
    // Opened by the path, resolved anew each time: after a USB re-enumeration a by-id link names a new tty.
    const device = resolveDevice(path);
    const port = new SerialPort({path, baudRate: settings.baudRate, lock: this.options.lock ?? true, autoOpen: false});
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    this.openedDevice = device;
    this.checkPortHolders();
    const session = new AtSession(port, settings.commandTimeoutMs, profile.urcPrefixes);
    this.port = port;
    this.session = session;
    this.sessionInitialised = false;
    port.on("close", (error?: Error & {disconnected?: boolean}) => this.onPortClosed(port, error));
    port.on("error", (error: Error & {code?: string}) => {
      this.recordError(error);
      // Writing to a hung-up tty fails with EIO: the device is gone even if no close came.
      if (error.code === "EIO") this.onDeviceGone(port);
    });
    this.watchDevice(port);
    session.on("urc", (line) => this.hooks.urc(line));
    logger.info("modem port open", {path, device, profile: profile.name});
    await this.hooks.opened();
  }

  // serialport reports an unplug as `close` with err.disconnected, but a hung-up tty can also
  // answer reads with 0 bytes, which serialport retries forever without closing. The device node
  // (or its by-id link) disappearing is the other sign of an unplug, so both are watched.
  private watchDevice(port: SerialPort): void {
    this.deviceWatcher?.close();
    const path = this.options.path;
    const name = basename(path);
    try {
      this.deviceWatcher = watch(dirname(path), (_event, changed) => {
        if (changed !== name) return;
        // Gone, or now a link to another device (re-enumerated): the tty we hold is dead either way.
        const now = resolveDevice(path);
        if (now === null) this.onDeviceGone(port, "modem disconnected");
        else if (now !== this.openedDevice) this.onDeviceGone(port, `modem re-enumerated: ${path} is now ${now}`);
      });
      this.deviceWatcher.on("error", () => this.deviceWatcher?.close());
    } catch (error) {
      this.recordError(error);
    }
  }

  private onDeviceGone(port: SerialPort, reason = "modem disconnected"): void {
    if (port !== this.port) return;
    const disconnected = Object.assign(new Error(reason), {disconnected: true});
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
    this.sessionInitialised = false;
    this.hooks.lost();
    if (error?.disconnected) {
      // serialport's own unplug error says "Disconnected"; ours name the reason.
      this.lastErrorMessage = error.message.startsWith("modem ") ? error.message : "modem disconnected";
      this.options.logger.warn(this.lastErrorMessage, {path: this.options.path});
    }
    if (!this.isStopped) this.scheduleReconnect();
  }

  private async closePort(reason: string): Promise<void> {
    const port = this.port;
    const session = this.session;
    this.port = null;
    this.session = null;
    this.sessionInitialised = false;
    this.deviceWatcher?.close();
    this.deviceWatcher = null;
    session?.close(reason);
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private openFailed(error: unknown): void {
    this.recordError(error);
    this.checkPortHolders(error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.isStopped || this.reconnectTimer) return;
    this.setState("reconnecting");
    const delays = this.options.settings.reconnectDelaysMs;
    const delay = delays[Math.min(this.reconnectAttempt, delays.length - 1)];
    this.reconnectAttempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.open().then(
        () => {
          this.reconnectAttempt = 0;
        },
        (error: unknown) => this.openFailed(error)
      );
    }, delay);
    this.reconnectTimer.unref();
  }
}

// serialport's words for EBUSY (another process set TIOCEXCL, as ModemManager does) and for a
// flock held by another process.
function isBusy(error: unknown): boolean {
  return error instanceof Error && /resource busy|EBUSY|cannot lock port|temporarily unavailable/i.test(error.message);
}
