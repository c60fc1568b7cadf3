import type {ChannelContext} from "../channel-context.js";
import type {ChannelDriver} from "../channel.js";
import {EmailDriver} from "./email.driver.js";

/** The email driver, for a gateway whose smtp.host and smtp.from are set. */
export function createEmailDriver(context: ChannelContext): ChannelDriver {
  return new EmailDriver({
    smtp: context.settings.smtp,
    publicUrl: context.settings.public_url,
    ackLinks: context.ackLinks,
    clock: context.clock,
    logger: context.logger
  });
}
