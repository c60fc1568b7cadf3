import type {ChannelDriver} from "./channel.js";
import type {ChannelContext} from "./channel-context.js";

/**
 * The production drivers, one per channel whose settings are present. A channel left out is
 * reported unavailable with the missing setting, and escalation skips it. A driver's modules (the
 * modem's AT protocol, SMS and calls; Telegram's client and poller; nodemailer) are loaded only
 * when its channel is configured (docs/benchmarks.md, "Idle footprint").
 */
export async function createChannelDrivers(context: ChannelContext): Promise<ChannelDriver[]> {
  const drivers: ChannelDriver[] = [];
  if (context.settings.telegram.bot_token) {
    const {createTelegramDriver} = await import("./telegram/index.js");
    drivers.push(createTelegramDriver(context));
  }
  if (context.settings.modem.port) {
    const {createModemDrivers} = await import("./voice-call/index.js");
    drivers.push(...createModemDrivers(context));
  }
  if (context.settings.smtp.host && context.settings.smtp.from) {
    const {createEmailDriver} = await import("./email/index.js");
    drivers.push(createEmailDriver(context));
  }
  return drivers;
}
