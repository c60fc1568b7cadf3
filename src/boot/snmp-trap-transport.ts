import type {TrapListener} from "../inbound/snmp/trap-listener.js";
import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {ParserWorkers} from "../lib/parser-workers.js";
import {RateLimiter} from "../lib/rate-limiter.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import {SnmpTrapIntake} from "../services/integrations/snmp/snmp-intake.js";
import type {Settings} from "../settings/defaults.js";
import {SettingsError} from "../settings/load-settings.js";

/**
 * Starts the SNMP trap listener when snmp.trap_port is set (null when it is 0, the default),
 * wired to the device intake through the trap intake; packets refused before they name an
 * integration are rate-limited per agent as the HTTP API limits a key. A port the gateway may not bind (162 without CAP_NET_BIND_SERVICE) refuses the
 * start as a bad setting does: traps would otherwise be lost without anyone seeing why.
 */
export async function startTrapTransport(
  settings: Settings,
  deps: {integrations: IntegrationsRepository; intake: DeviceIntake; clock: Clock; parserWorkers?: ParserWorkers},
  logger: Logger
): Promise<TrapListener | null> {
  const {trap_port: port, trap_address: address} = settings.snmp;
  if (!port) return null;
  // The trap listener and its parser worker are loaded only when traps are on (idle footprint, docs/benchmarks.md).
  const {TrapListener} = await import("../inbound/snmp/trap-listener.js");
  const {per_second: perSecond, burst} = settings.rate_limit;
  const intake = new SnmpTrapIntake(deps.integrations, deps.intake, new RateLimiter(perSecond, burst, deps.clock));
  const log = logger.child({component: "snmp-traps"});
  const listener = new TrapListener({
    port,
    address,
    credentials: () => intake.credentials(),
    clock: deps.clock,
    logger: log,
    onTrap: (trap) =>
      intake.receive(trap).catch((error: unknown) =>
        // UDP has no retry to lean on: the trap (an inform was already answered) is lost, and said so.
        log.error("a trap could not be recorded", {agent: trap.agent, error: (error as Error).message})
      ),
    onRefused: (refusal) => intake.refused(refusal.agent, refusal.size, refusal.reason)
  });
  try {
    await listener.start();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EACCES") throw error;
    throw new SettingsError(
      `snmp.trap_port: may not listen on ${address}:${port} (ports below 1024 need CAP_NET_BIND_SERVICE, which the systemd unit grants; or choose a port above 1023)`
    );
  }
  deps.parserWorkers?.register("snmp-parser", () => {
    const stats = listener.stats();
    if (!stats) return null;
    const {parser, datagrams, traps, replaysRefused, invalidEvents} = stats;
    return {...parser, counters: {datagrams, traps, replays_refused: replaysRefused, invalid_events: invalidEvents}};
  });
  log.info("SNMP trap listener serving", {address, port});
  return listener;
}
