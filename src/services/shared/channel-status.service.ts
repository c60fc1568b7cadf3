import type {Settings} from "../../settings/defaults.js";
import type {ChannelRegistry} from "../../channels/channel-registry.js";
import {CHANNELS, type Channel} from "../../domain/vocabulary.js";
import type {Logger} from "../../lib/logger.js";

export interface ChannelState {
  channel: Channel;
  available: boolean;
  reason: string | null;
  /** The driver's live details (modem signal, WAN state), when it has any. */
  details: Record<string, unknown> | null;
}

/**
 * Which channels the gateway itself can use right now: settings first (the fix an operator can
 * make), then the driver's own live state (modem registration, WAN reachability).
 */
export class ChannelStatusService {
  constructor(
    private readonly settings: Settings,
    private readonly registry: ChannelRegistry
  ) {}

  gatewayChannel(channel: Channel): ChannelState {
    const reason = this.missingSetting(channel) ?? this.registry.unavailableReason(channel);
    return {channel, available: reason === null, reason, details: this.registry.details(channel)};
  }

  /** Says at start when no channel is configured at all: alerts are then accepted but reach nobody. */
  warnWhenNoneConfigured(logger: Logger): void {
    const missing = CHANNELS.map((channel) => this.missingSetting(channel));
    if (missing.every((reason) => reason !== null))
      logger.warn(
        "no channel is configured: alerts are accepted but cannot reach anyone until smtp, modem or telegram is set up",
        {missing: [...new Set(missing)]}
      );
  }

  all(): ChannelState[] {
    return CHANNELS.map((channel) => this.gatewayChannel(channel));
  }

  /** The setting an operator must fill in before the channel can work, or null once it is configured. */
  missingSetting(channel: Channel): string | null {
    switch (channel) {
      case "email":
        return this.settings.smtp.host && this.settings.smtp.from
          ? null
          : "SMTP is not configured (smtp.host and smtp.from)";
      case "telegram_voice":
        return this.settings.telegram.bot_token ? null : "Telegram is not configured (telegram.bot_token)";
      case "voice_call":
      case "sms":
        return this.settings.modem.port ? null : "no modem is configured (modem.port)";
    }
  }
}
