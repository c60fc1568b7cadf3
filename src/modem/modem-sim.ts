import type {Clock} from "../lib/clock.js";
import {isoTimestamp} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {AtCommandError} from "./at-session.js";
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
import type {Capability, ModemProfile} from "./profiles.js";

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

  /** Runs the init sequence; the link ends `ready`, or `unresponsive` with the error recorded. */
  async initialise(): Promise<void> {
    const {link, profile, logger} = this.context;
    try {
      for (const command of ["ATE0", "AT+CMEE=1", "AT+CMGF=1"]) await link.run(command);
      this.capabilities = new Set();
      const urcPort = this.context.urcPort;
      if (urcPort && profile.urcPortCommand) {
        await link.run(profile.urcPortCommand(urcPort)).catch((error: unknown) => {
          if (!(error instanceof AtCommandError) || error.kind === "timeout" || error.kind === "closed") throw error;
          logger.info("modem refused the URC port setting", {port: urcPort, error: error.message});
        });
      }
      for (const step of profile.init) {
        try {
          await link.run(step.command);
          if (step.capability) this.capabilities.add(step.capability);
        } catch (error) {
          if (
            !step.optional ||
            !(error instanceof AtCommandError) ||
            error.kind === "timeout" ||
            error.kind === "closed"
          )
            throw error;
          logger.info("modem optional init command refused", {command: step.command, error: error.message});
        }
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

  /** Signal, registration, operator and SIM; throws what the first failing query threw. */
  async queryHealth(): Promise<void> {
    const link = this.context.link;
    const csq = await link.run("AT+CSQ", {prefixes: ["+CSQ:"]});
    this.signalStrength = parseCsq(csq.lines[0] ?? "") ?? {rssi: null, dbm: null};
    const creg = await link.run("AT+CREG?", {prefixes: ["+CREG:"]});
    this.creg = parseRegistration(creg.lines[0] ?? "") ?? "unknown";
    // 2G modules have no CEREG: an ERROR there only means "no LTE registration".
    const cereg = await link.run("AT+CEREG?", {prefixes: ["+CEREG:"]}).catch((error: unknown) => {
      if (error instanceof AtCommandError && (error.kind === "timeout" || error.kind === "closed")) throw error;
      return null;
    });
    this.cereg = cereg ? (parseRegistration(cereg.lines[0] ?? "") ?? "unknown") : "unknown";
    const cops = await link.run("AT+COPS?", {prefixes: ["+COPS:"]});
    this.operatorName = parseOperator(cops.lines[0] ?? "");
    await this.checkSim();
    this.lastCheckedAt = isoTimestamp(this.context.clock.now());
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
      if (!(error instanceof AtCommandError) || error.kind !== "cme") throw error;
      sim = simStateForCme(error.code);
    }
    if (sim === "pin_required") sim = await this.enterPin();
    if (sim === "ready") sim = await this.simInitialised();
    this.sim = sim;
  }

  // Quectel answers READY before SMS storage is usable (PROTOCOLS 1.1): ask until it says so.
  private async simInitialised(): Promise<SimState> {
    const query = this.context.profile.simReadyQuery;
    if (!query) return "ready";
    try {
      const response = await this.context.link.run(query.command, {prefixes: [query.prefix]});
      return query.ready(response.lines[0] ?? "") ? "ready" : "initialising";
    } catch (error) {
      if (error instanceof AtCommandError && (error.kind === "error" || error.kind === "cme")) return "ready";
      throw error;
    }
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
