import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {ModemProfile, ProfileName} from "./profiles.js";

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

/** The modem's timings and limits with every default filled in. */
export type ModemSettings = typeof DEFAULTS;

/** The options' timings and limits, each one left out taking its default. */
export function resolveSettings(options: ModemOptions): ModemSettings {
  const given: Record<string, unknown> = {};
  for (const key of Object.keys(DEFAULTS)) {
    const value = (options as unknown as Record<string, unknown>)[key];
    if (value !== undefined) given[key] = value;
  }
  return {...DEFAULTS, ...(given as Partial<ModemSettings>)};
}
