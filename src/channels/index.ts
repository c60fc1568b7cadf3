import type {ChannelDriver} from "./channel.js";
import type {ChannelContext} from "./channel-context.js";
import {createTelegramDriver} from "./telegram/index.js";
import {createModemDrivers} from "./voice-call/index.js";
import {createEmailDriver} from "./email/index.js";

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
