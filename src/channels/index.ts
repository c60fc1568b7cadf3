import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {Settings} from "../settings/defaults.js";
import type {Journal} from "../store/journal/journal.js";
import type {AcknowledgementPort, ChannelDriver} from "./channel.js";
import {createTelegramDriver} from "./telegram/index.js";
import {createModemDrivers} from "./voice-call/index.js";
import {createEmailDriver} from "./email/index.js";
import type {AckLinkSigner} from "./email/ack-link.js";

/** What the production drivers are built from. */
export interface ChannelContext {
  settings: Settings;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  journal: Journal;
  acknowledgements: AcknowledgementPort;
  /** Signs the Acknowledge links in emails. */
  ackLinks: AckLinkSigner;
}

/**
 * The production drivers, one per channel whose settings are present. A channel left out is
 * reported unavailable with the missing setting, and escalation skips it.
 */
export function createChannelDrivers(context: ChannelContext): ChannelDriver[] {
  const drivers: ChannelDriver[] = [];
  if (context.settings.telegram.bot_token) drivers.push(createTelegramDriver(context));
  if (context.settings.modem.port) drivers.push(...createModemDrivers(context));
  if (context.settings.smtp.host && context.settings.smtp.from) drivers.push(createEmailDriver(context));
  return drivers;
}
