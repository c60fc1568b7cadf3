import type {Settings} from "../settings/defaults.js";
import {CHANNELS, type Channel} from "../domain/vocabulary.js";

export interface ChannelState {
  channel: Channel;
  available: boolean;
  reason: string | null;
}

/**
 * Which channels the gateway itself can use, from its settings. The drivers of the channels
 * issue refine this with live state (modem registration, WAN reachability).
 */
export class ChannelStatusService {
  constructor(private readonly settings: Settings) {}

  gatewayChannel(channel: Channel): ChannelState {
    const missing = this.missingSetting(channel);
    return {channel, available: missing === null, reason: missing};
  }

  all(): ChannelState[] {
    return CHANNELS.map((channel) => this.gatewayChannel(channel));
  }

  private missingSetting(channel: Channel): string | null {
    switch (channel) {
      case "email":
        return this.settings.smtp.host && this.settings.smtp.from ? null : "SMTP is not configured (smtp.host and smtp.from)";
      case "telegram_voice":
        return this.settings.telegram.bot_token ? null : "Telegram is not configured (telegram.bot_token)";
      case "voice_call":
      case "sms":
        return this.settings.modem.port ? null : "no modem is configured (modem.port)";
    }
  }
}
