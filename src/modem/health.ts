// Pure readers for the health queries (PROTOCOLS 1.1) and the snapshot they fill in.

import type {PortHolder} from "./port-holders.js";
import type {Capability, ProfileName} from "./profiles.js";

export type SimState =
  | "unknown"
  | "ready"
  | "initialising"
  | "pin_required"
  | "sim_pin_rejected"
  | "puk_required"
  | "not_inserted"
  | "failure"
  | "unreadable"
  | "busy";
export type Registration = "unknown" | "not_registered" | "home" | "searching" | "denied" | "roaming";
export type ModemState = "stopped" | "opening" | "ready" | "unresponsive" | "reconnecting";

/** What the modem looks like right now, for /health and the dashboard; never carries the PIN. */
export interface ModemHealth {
  profile: ProfileName;
  state: ModemState;
  port_open: boolean;
  /** The device the port path led to when opened (`/dev/ttyUSB2` for a by-id link); null before. */
  device: string | null;
  /** Other processes holding the port at the last look (ModemManager...); empty when none. */
  port_held_by: PortHolder[];
  sim: SimState;
  registration: Registration;
  operator: string | null;
  signal: {rssi: number | null; dbm: number | null};
  capabilities: Capability[];
  consecutive_timeouts: number;
  last_error: string | null;
  /** ISO time of the last health pass that got an answer, from the injected clock. */
  checked_at: string | null;
}

/** `+CSQ: <rssi>,<ber>`: 0 = -113 dBm, 2 dBm per step, 31 = -51 dBm or better, 99 = unknown. */
export function parseCsq(line: string): {rssi: number | null; dbm: number | null} | null {
  const match = /^\+CSQ:\s*(\d+)/.exec(line);
  if (!match) return null;
  const rssi = Number(match[1]);
  if (rssi > 31) return {rssi: null, dbm: null};
  return {rssi, dbm: -113 + 2 * rssi};
}

const REGISTRATION: Record<string, Registration> = {
  "0": "not_registered",
  "1": "home",
  "2": "searching",
  "3": "denied",
  "4": "unknown",
  "5": "roaming"
};

/** `+CREG: <n>,<stat>[,...]` (query) or `+CREG: <stat>[,...]` (URC); same for +CEREG/+CGREG. */
export function parseRegistration(line: string): Registration | null {
  const match = /^\+C(?:E|G)?REG:\s*(\d+)(?:,(\d+))?/.exec(line);
  if (!match) return null;
  // The query answer always starts with <n>; a lone number is the URC's <stat>. Location fields
  // after <stat> are quoted hex, so a second bare digit is always <stat>.
  const stat = match[2] ?? match[1];
  return REGISTRATION[stat] ?? "unknown";
}

/** The better of two registrations (2G/3G CREG and LTE CEREG): registered on either counts. */
export function bestRegistration(a: Registration, b: Registration): Registration {
  const rank: Registration[] = ["home", "roaming", "searching", "denied", "not_registered", "unknown"];
  return rank.indexOf(a) <= rank.indexOf(b) ? a : b;
}

/** `+COPS: 0,0,"Operator",7` → "Operator"; `+COPS: 0` (no operator selected) → null. */
export function parseOperator(line: string): string | null {
  const match = /^\+COPS:\s*\d+,\d+,"([^"]*)"/.exec(line);
  return match ? match[1] : null;
}

/** `+CPIN: READY | SIM PIN | SIM PUK`; anything else (PH-SIM PIN, SIM PIN2...) is reported as is. */
export function parseCpin(line: string): SimState {
  const value = line.replace(/^\+CPIN:\s*/, "").trim();
  if (value === "READY") return "ready";
  if (value === "SIM PIN") return "pin_required";
  if (value === "SIM PUK") return "puk_required";
  return "unknown";
}

/** Maps the +CME errors a SIM query can end with to a SIM state. */
export function simStateForCme(code: number | null): SimState {
  switch (code) {
    case 10:
      return "not_inserted";
    case 11:
      return "pin_required";
    case 12:
      return "puk_required";
    case 14:
      return "busy";
    default:
      return "failure";
  }
}
