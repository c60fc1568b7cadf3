import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken} from "../../lib/tokens.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {TelegramCallbacksRepository} from "../../store/journal/telegram-callbacks.repository.js";
import type {AlertSummary} from "../channel.js";
import {spokenAlerts} from "../speech/spoken-alert.js";
import type {SpeechSynthesizer} from "../speech/speech-synthesizer.js";
import type {BotApiClient} from "./bot-api-client.js";
import {acknowledgeKeyboard, alertText, voiceCaption} from "./telegram-message.js";

// 16 random bytes: unguessable, and "ack:" + 22 characters stays far below the 64-byte limit.
const TOKEN_BYTES = 16;

export interface AlertSenderParts {
  api: BotApiClient;
  speech: SpeechSynthesizer;
  callbacks: TelegramCallbacksRepository;
  journal: Journal;
  clock: Clock;
  logger: Logger;
}

/**
 * Sends alerts to one chat: a spoken voice note, then the written message with an Acknowledge
 * button. What the button acknowledges is committed before anything is sent, so a press can
 * never arrive for a button the gateway does not know. Without working speech tools the
 * written message goes alone, and the result says why.
 */
export class TelegramAlertSender {
  constructor(private readonly parts: AlertSenderParts) {}

  /** Resolves with what was sent, as the attempt's detail; throws BotApiError as the API failed. */
  async send(chatId: string, alerts: AlertSummary[], heldSince: string | null, signal?: AbortSignal): Promise<string> {
    const {api, callbacks, journal, clock} = this.parts;
    const token = secretToken(TOKEN_BYTES);
    await journal.write(() =>
      callbacks.insert(
        token,
        {chat_id: chatId, notification_ids: alerts.map((alert) => alert.notification_id)},
        isoTimestamp(clock.now())
      )
    );
    const voice = await this.voiceNote(alerts, signal);
    if (voice.ogg) await api.sendVoice(chatId, voice.ogg, voiceCaption(alerts), signal);
    await api.sendMessage(chatId, alertText(alerts, heldSince), acknowledgeKeyboard(token), signal);
    return voice.ogg
      ? "voice note and message with an Acknowledge button sent"
      : `message with an Acknowledge button sent, without a voice note: ${voice.problem}`;
  }

  private async voiceNote(
    alerts: AlertSummary[],
    signal?: AbortSignal
  ): Promise<{ogg: Buffer | null; problem: string | null}> {
    const {speech, logger} = this.parts;
    if (speech.unavailable) return {ogg: null, problem: speech.unavailable};
    try {
      return {ogg: await speech.synthesize(spokenAlerts(alerts), signal), problem: null};
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      logger.warn("voice note could not be made; sending the text alone", {error: error as Error});
      return {ogg: null, problem: (error as Error).message};
    }
  }
}
