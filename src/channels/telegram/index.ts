import {TelegramCallbacksRepository} from "../../store/journal/telegram-callbacks.repository.js";
import {TelegramOffsetsRepository} from "../../store/journal/telegram-offsets.repository.js";
import {TelegramRelayRepository} from "../../store/journal/telegram-relay.repository.js";
import type {ChannelContext} from "../channel-context.js";
import {SettingsError} from "../../settings/load-settings.js";
import type {Settings} from "../../settings/defaults.js";
import {ConnectivityProbe} from "../connectivity.js";
import {SpeechSynthesizer} from "../speech/speech-synthesizer.js";
import {TelegramAlertSender} from "./alert-sender.js";
import {BotApiClient} from "./bot-api-client.js";
import {observationOf} from "./link-observation.js";
import {TelegramRelay} from "./telegram-relay.js";
import {TelegramUpdatesPoller} from "./updates-poller.js";
import {TelegramVoiceDriver} from "./telegram-voice.driver.js";

const SPEECH_TIMEOUT_MS = 30_000;

// Checked when the driver is built, so a bad value stops the start with its name, as the loader does.
function checkSettings(telegram: Settings["telegram"]): void {
  if (!/^https?:\/\//.test(telegram.api_url))
    throw new SettingsError("telegram.api_url: must be an absolute http(s) URL");
  const positive = ["probe_interval_seconds", "probe_max_backoff_seconds", "request_timeout_seconds"] as const;
  for (const key of positive)
    if (!(telegram[key] > 0)) throw new SettingsError(`telegram.${key}: must be greater than 0, got ${telegram[key]}`);
  if (!(telegram.poll_timeout_seconds >= 1 && telegram.poll_timeout_seconds <= 50))
    throw new SettingsError(`telegram.poll_timeout_seconds: must be 1..50, got ${telegram.poll_timeout_seconds}`);
  if (!(telegram.max_retry_after_seconds >= 0))
    throw new SettingsError(
      `telegram.max_retry_after_seconds: must be 0 or more, got ${telegram.max_retry_after_seconds}`
    );
}

/** The telegram_voice driver with its Bot API client, WAN probe, updates poller and relay, from settings. */
export function createTelegramDriver({
  settings,
  journal,
  clock,
  logger: parent,
  acknowledgements
}: ChannelContext): TelegramVoiceDriver {
  const telegram = settings.telegram;
  checkSettings(telegram);
  const logger = parent.child({component: "telegram"});
  const api = new BotApiClient({
    apiUrl: telegram.api_url,
    token: telegram.bot_token,
    requestTimeoutMs: telegram.request_timeout_seconds * 1000,
    maxRetryAfterSeconds: telegram.max_retry_after_seconds,
    logger
  });
  const connectivity = new ConnectivityProbe({
    name: "the Telegram Bot API",
    check: (signal) =>
      api.getMe(signal).then(
        () => ({ok: true as const}),
        (error) =>
          observationOf(error) ?? {ok: false as const, state: "offline" as const, error: (error as Error).message}
      ),
    intervalMs: telegram.probe_interval_seconds * 1000,
    maxBackoffMs: telegram.probe_max_backoff_seconds * 1000,
    clock,
    logger
  });
  const callbacks = new TelegramCallbacksRepository(journal);
  const speech = new SpeechSynthesizer({voice: telegram.voice, timeoutMs: SPEECH_TIMEOUT_MS});
  const sender = new TelegramAlertSender({api, speech, callbacks, journal, clock, logger});
  const relay = new TelegramRelay({
    relays: new TelegramRelayRepository(journal),
    sender,
    connectivity,
    journal,
    clock,
    logger
  });
  const poller = new TelegramUpdatesPoller({
    api,
    // The token's part before the colon is the bot's public user id.
    botId: telegram.bot_token.split(":")[0],
    offsets: new TelegramOffsetsRepository(journal),
    callbacks,
    journal,
    acknowledgements,
    connectivity,
    pollTimeoutSeconds: telegram.poll_timeout_seconds,
    clock,
    logger
  });
  return new TelegramVoiceDriver({sender, speech, connectivity, poller, relay, callbacks, journal, clock, logger});
}
