import type {Clock} from "../lib/clock.js";
import {isoTimestamp} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {AtCommandError, isRefusal} from "./at-session.js";
import {
  bestRegistration,
  parseCpin,
  parseCsq,
  parseOperator,
  parseRegistration,
  simStateForCme,
  type ModemHealth,
  type Registration,
  type SimState
} from "./health.js";
import type {AtLink} from "./modem-link.js";
import type {ModemSettings} from "./modem-options.js";
import type {Capability, InitStep, ModemProfile} from "./profiles.js";

// Every family, before its own init sequence. All optional: without ATE0 the session drops the
// echoed commands; without CMEE=1 errors come as plain ERROR, which every reader takes; without
// text mode the SMS part falls back to what the modem offers.
const COMMON_SETUP: InitStep[] = [
  {command: "ATE0", optional: true},
  {command: "AT+CMEE=1", optional: true},
  {command: "AT+CMGF=1", optional: true}
];

/** Which optional features the modem's firmware took during initialisation. */
export interface Capabilities {
  has(capability: Capability): boolean;
}

/** What the SIM part works with. */
export interface ModemSimContext {
  link: AtLink;
  profile: ModemProfile;
  settings: ModemSettings;
  clock: Clock;
  logger: Logger;
  /** Entered at most once per open, and never again after the SIM rejected it. */
  pin?: string;
  /** Quectel only: the port URCs go to; empty leaves the module's choice. */
  urcPort?: string;
}

/**
 * Brings the module up after every (re)open (the common commands, then the profile's init
 * sequence, noting which optional features it took), enters the SIM PIN once, and keeps the
 * SIM, registration, operator and signal the health queries last reported.
 */
export class ModemSim implements Capabilities {
  private capabilities = new Set<Capability>();
  private pinRejected = false;
  private pinEnteredThisOpen = false;
  private sim: SimState = "unknown";
  private creg: Registration = "unknown";
  private cereg: Registration = "unknown";
  private operatorName: string | null = null;
  private signalStrength: {rssi: number | null; dbm: number | null} = {rssi: null, dbm: null};
  private lastCheckedAt: string | null = null;
  // Refusals already logged: the init sequence runs after every re-open, the queries every pass.
  private readonly refusalsReported = new Set<string>();

  constructor(private readonly context: ModemSimContext) {}

  has(capability: Capability): boolean {
    return this.capabilities.has(capability);
  }

  /** The SIM and network as last reported, for the modem's health. */
  status(): Pick<ModemHealth, "sim" | "registration" | "operator" | "signal" | "capabilities" | "checked_at"> {
    return {
      sim: this.sim,
      registration: bestRegistration(this.creg, this.cereg),
      operator: this.operatorName,
      signal: {...this.signalStrength},
      capabilities: [...this.capabilities].sort(),
      checked_at: this.lastCheckedAt
    };
  }

  /** A newly opened or reset module: the PIN may be entered once more (unless it was rejected). */
  freshModule(): void {
    this.pinEnteredThisOpen = false;
  }

  /** A registration URC keeps the 2G/3G registration current between health passes. */
  receiveRegistration(line: string): void {
    const registration = parseRegistration(line);
    if (registration && line.startsWith("+CREG:")) this.creg = registration;
  }

  /**
   * Runs the init sequence; the link ends `ready`, or `unresponsive` with the error recorded. Only
   * `AT`, the SIM state and the registration are required: any other command may be refused
   * (older or stripped firmware), and the modem then works without what it would have set.
   */
  async initialise(): Promise<void> {
    const {link, profile} = this.context;
    try {
      await this.probe();
      this.capabilities = new Set();
      const urcPort = this.context.urcPort;
      const urcPortSteps: InitStep[] =
        urcPort && profile.urcPortCommand ? [{command: profile.urcPortCommand(urcPort), optional: true}] : [];
      for (const step of [...COMMON_SETUP, ...urcPortSteps, ...profile.init]) {
        const taken = await this.unlessRefused(step.command, () => link.run(step.command), step.optional);
        if (taken && step.capability) this.capabilities.add(step.capability);
      }
      link.markInitialised();
      // Registration and signal right away: availability should not wait for the first health pass.
      await this.queryHealth().catch((error: unknown) => {
        if (!(error instanceof AtCommandError) || error.kind === "timeout" || error.kind === "closed") throw error;
        link.recordError(error);
      });
      link.setState("ready");
    } catch (error) {
      link.recordError(error);
      link.setState("unresponsive");
    }
  }

  /**
   * A bare `AT`: any answer shows the modem is there. Some firmware answers ERROR to it (while
   * busy, or always), which is no fault: only a timeout or a closed port is thrown.
   */
  async probe(): Promise<void> {
    await this.context.link.run("AT").catch((error: unknown) => {
      if (!(error instanceof AtCommandError && error.kind === "error")) throw error;
    });
  }

  /**
   * Signal, registration, operator and SIM; throws what the first failing required query threw.
   * Signal, LTE registration and operator may be refused: they are then shown as unknown. Once
   * `stop` aborts, no further query is sent (it throws the abort reason instead).
   */
  async queryHealth(stop?: AbortSignal): Promise<void> {
    const link = this.context.link;
    const ask = (command: string, prefix: string) => {
      stop?.throwIfAborted();
      return link.run(command, {prefixes: [prefix]});
    };
    const csq = await this.unlessRefused("AT+CSQ", () => ask("AT+CSQ", "+CSQ:"));
    this.signalStrength = parseCsq(csq?.lines[0] ?? "") ?? {rssi: null, dbm: null};
    const creg = await ask("AT+CREG?", "+CREG:");
    this.creg = parseRegistration(creg.lines[0] ?? "") ?? "unknown";
    // 2G modules have no CEREG: an ERROR there only means "no LTE registration".
    const cereg = await this.unlessRefused("AT+CEREG?", () => ask("AT+CEREG?", "+CEREG:"));
    this.cereg = cereg ? (parseRegistration(cereg.lines[0] ?? "") ?? "unknown") : "unknown";
    const cops = await this.unlessRefused("AT+COPS?", () => ask("AT+COPS?", "+COPS:"));
    this.operatorName = parseOperator(cops?.lines[0] ?? "");
    stop?.throwIfAborted();
    await this.checkSim();
    this.lastCheckedAt = isoTimestamp(this.context.clock.now());
  }

  /**
   * Runs a command the modem may refuse: a refusal (ERROR, +CME, +CMS) gives null and is logged
   * once per command at debug level, never as the modem's last error, since nothing is wrong
   * that a technician could fix. A timeout or a closed port is a real failure and is thrown, as
   * is a refusal of a step that is not optional.
   */
  private async unlessRefused<T>(command: string, run: () => Promise<T>, mayRefuse = true): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      if (!mayRefuse || !isRefusal(error)) throw error;
      if (!this.refusalsReported.has(command)) {
        this.refusalsReported.add(command);
        this.context.logger.debug("modem refused an optional command; working without it", {
          command,
          error: error.reason
        });
      }
      return null;
    }
  }

  private async checkSim(): Promise<void> {
    let sim: SimState;
    try {
      const response = await this.context.link.run("AT+CPIN?", {
        prefixes: ["+CPIN:"],
        timeoutMs: Math.max(this.context.settings.commandTimeoutMs, 1000)
      });
      sim = parseCpin(response.lines[0] ?? "");
    } catch (error) {
      if (!(error instanceof AtCommandError) || (error.kind !== "cme" && error.kind !== "error")) throw error;
      // Without extended errors (CMEE refused) a missing or failed SIM is a plain ERROR.
      sim = error.kind === "cme" ? simStateForCme(error.code) : "unreadable";
    }
    if (sim === "pin_required") sim = await this.enterPin();
    if (sim === "ready") sim = await this.simInitialised();
    this.sim = sim;
  }

  // Quectel answers READY before SMS storage is usable (PROTOCOLS 1.1): ask until it says so.
  private async simInitialised(): Promise<SimState> {
    const query = this.context.profile.simReadyQuery;
    if (!query) return "ready";
    const response = await this.unlessRefused(query.command, () =>
      this.context.link.run(query.command, {prefixes: [query.prefix]})
    );
    return !response || query.ready(response.lines[0] ?? "") ? "ready" : "initialising";
  }

  // Once per open, never after a rejection: three wrong PINs lock the SIM behind its PUK.
  private async enterPin(): Promise<SimState> {
    const {link, logger, pin} = this.context;
    if (this.pinRejected) return "sim_pin_rejected";
    if (!pin || this.pinEnteredThisOpen) return "pin_required";
    this.pinEnteredThisOpen = true;
    try {
      await link.run(`AT+CPIN="${pin}"`, {label: "AT+CPIN=<pin>"});
      logger.info("modem SIM PIN accepted");
      return "ready";
    } catch (error) {
      if (error instanceof AtCommandError && error.kind === "cme" && error.code === 16) {
        this.pinRejected = true;
        link.reportProblem("SIM rejected the configured PIN; not retrying");
        logger.error("modem SIM PIN rejected; fix the PIN and restart (it will not be retried)");
        return "sim_pin_rejected";
      }
      throw error;
    }
  }
}
