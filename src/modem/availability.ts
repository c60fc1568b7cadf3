import type {ModemHealth} from "./health.js";

const SIM_REASONS: Partial<Record<ModemHealth["sim"], string>> = {
  unknown: "the modem has not reported its SIM yet",
  initialising: "the SIM is still initialising",
  pin_required: "the SIM is locked: set modem.pin",
  sim_pin_rejected: "the SIM rejected the configured PIN (it is not retried: fix modem.pin and restart)",
  puk_required: "the SIM is blocked and needs its PUK",
  not_inserted: "no SIM card in the modem",
  failure: "the SIM failed",
  unreadable:
    "the modem answers ERROR when asked for its SIM: no SIM, or a failed one (it refused extended error codes, AT+CMEE=1, so it does not say which)",
  busy: "the SIM is busy"
};

const UNREGISTERED: Partial<Record<ModemHealth["registration"], string>> = {
  not_registered: "the modem is not registered on a mobile network",
  searching: "the modem is searching for a mobile network",
  denied: "the mobile network denied the modem's registration"
};

/**
 * Why calls and SMS cannot go through this modem right now, or null: another program on the
 * port, then the port and AT (a technician's fix), then the SIM, then the network. An unknown
 * registration does not block: some modems never report it, and the dial then says what is wrong.
 */
export function modemUnavailableReason(health: ModemHealth, path: string): string | null {
  if (health.port_held_by.length) return heldReason(health.port_held_by, path);
  if (!health.port_open) return `modem port ${path} is not open${health.last_error ? ` (${health.last_error})` : ""}`;
  if (health.state !== "ready") return `modem is ${health.state}${health.last_error ? ` (${health.last_error})` : ""}`;
  const sim = SIM_REASONS[health.sim];
  if (sim) return sim;
  return UNREGISTERED[health.registration] ?? null;
}

// Two programs on one AT port take each other's answers; ModemManager is the usual one, installed
// by default on Debian and Ubuntu, and has a documented fix.
function heldReason(holders: ModemHealth["port_held_by"], path: string): string {
  const names = holders.map((holder) => `${holder.name} (pid ${holder.pid})`).join(", ");
  const fix = holders.some((holder) => holder.name === "ModemManager")
    ? "make ModemManager ignore the modem (docs/modem.md#modemmanager)"
    : "stop it (one AT port serves one program)";
  if (holders.every((holder) => holder.suspected))
    return `modem port ${path} is busy or not answering, and ${names} is running, which takes modems' ports: ${fix}`;
  return `modem port ${path} is also held by ${names}, which takes the modem's answers: ${fix}`;
}
