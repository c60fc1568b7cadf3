import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {TelegramCallbacksRepository} from "../../store/journal/telegram-callbacks.repository.js";
import {ChannelError, type ChannelDriver, type Delivery, type DeliveryResult} from "../channel.js";
import type {ConnectivityProbe} from "../connectivity.js";
import type {SpeechSynthesizer} from "../speech/speech-synthesizer.js";
import type {TelegramAlertSender} from "./alert-sender.js";
import {BotApiError} from "./bot-api-client.js";
import {observationOf} from "./link-observation.js";
import type {TelegramRelay} from "./telegram-relay.js";
import type {TelegramUpdatesPoller} from "./updates-poller.js";

export interface TelegramDriverParts {
  sender: TelegramAlertSender;
  speech: SpeechSynthesizer;
  connectivity: ConnectivityProbe;
  poller: TelegramUpdatesPoller;
  relay: TelegramRelay;
  callbacks: TelegramCallbacksRepository;
  journal: Journal;
  clock: Clock;
  logger: Logger;
}

// Buttons older than this are forgotten; a press then answers "no longer known".
const CALLBACK_RETENTION_MS = 30 * 24 * 3600_000;

/**
 * The telegram_voice channel: a voice note spoken offline plus the written alert with an
 * Acknowledge button, to the recipient's chat id. The outcome is `delivered` once the Bot API
 * accepted the message (Telegram then holds it for the chat; bots get no read receipt, so
 * nothing later could confirm more); the acknowledgement comes through the updates poller. Bots
 * cannot place calls, so this is a message, not a ringing phone. While the Bot API is unreachable
 * the channel reports itself unavailable: the escalation moves on at once and carries the
 * Telegram step when the link is back; a delivery cut off by the link dropping is relayed then.
 */
export class TelegramVoiceDriver implements ChannelDriver {
  readonly channel = "telegram_voice" as const;
  // Telegram allows about 30 messages a second across chats; a few at once is far below it.
  readonly concurrency = 4;

  constructor(private readonly parts: TelegramDriverParts) {
    parts.connectivity.onSuccess(() => {
      if (parts.relay.pendingCount() > 0) void parts.relay.tick();
    });
  }

  unavailableReason(): string | null {
    return this.parts.connectivity.unavailableReason();
  }

  async deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    try {
      const detail = await this.parts.sender.send(delivery.contact, delivery.alerts, null, signal);
      this.parts.connectivity.observe({ok: true});
      return {outcome: "delivered", detail};
    } catch (error) {
      if (signal.aborted) throw error;
      throw await this.failure(error, delivery);
    }
  }

  async start(): Promise<void> {
    const {speech, callbacks, journal, clock, logger, connectivity, poller} = this.parts;
    const speechProblem = await speech.check();
    if (speechProblem)
      logger.warn("Telegram alerts go without voice notes: speech is unavailable", {reason: speechProblem});
    await journal.write(() => callbacks.prune(isoTimestamp(clock.now() - CALLBACK_RETENTION_MS)));
    connectivity.start();
    poller.start();
  }

  async stop(): Promise<void> {
    await this.parts.poller.stop();
    await this.parts.relay.stop();
    await this.parts.connectivity.stop();
  }

  details(): Record<string, unknown> {
    const {connectivity, poller, relay, speech} = this.parts;
    return {
      link: connectivity.snapshot,
      updates: poller.snapshot,
      relay: {pending: relay.pendingCount()},
      voice_notes: {available: speech.unavailable === null, reason: speech.unavailable}
    };
  }

  private async failure(error: unknown, delivery: Delivery): Promise<ChannelError> {
    const message = (error as Error).message;
    const observation = observationOf(error);
    if (observation) this.parts.connectivity.observe(observation);
    if (!(error instanceof BotApiError)) return new ChannelError(message, false);
    if (error.failure === "contact") return new ChannelError(message, true);
    if (error.failure === "unreachable") {
      try {
        await this.parts.relay.keepDelivery(delivery);
        return new ChannelError(`${message}; kept to relay when Telegram is reachable again`, false);
      } catch (keepError) {
        this.parts.logger.error("could not keep a Telegram message for relay", {error: keepError as Error});
      }
    }
    if (error.failure === "flood")
      return new ChannelError(`${message} (Telegram asked to wait ${error.retryAfterSeconds} s)`, false);
    return new ChannelError(message, false);
  }
}
