import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {TelegramCallbacksRepository} from "../../store/journal/telegram-callbacks.repository.js";
import type {TelegramOffsetsRepository} from "../../store/journal/telegram-offsets.repository.js";
import type {AcknowledgementPort} from "../channel.js";
import type {ConnectivityProbe} from "../connectivity.js";
import {BotApiError, type BotApiClient, type CallbackQuery} from "./bot-api-client.js";
import {observationOf} from "./link-observation.js";
import {acknowledgedText, callbackToken, displayName} from "./telegram-message.js";

export interface UpdatesPollerParts {
  api: BotApiClient;
  /** The bot's id (the public part of its token): offsets are kept per bot. */
  botId: string;
  offsets: TelegramOffsetsRepository;
  callbacks: TelegramCallbacksRepository;
  journal: Journal;
  acknowledgements: AcknowledgementPort;
  connectivity: ConnectivityProbe;
  pollTimeoutSeconds: number;
  clock: Clock;
  logger: Logger;
}

/** What /readyz shows about the poller. */
export interface PollerSnapshot {
  state: "stopped" | "polling" | "retrying";
  next_offset: number;
  last_update_at: string | null;
  last_error: string | null;
}

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

export const ANSWERS = {
  acknowledged: "Acknowledged. Thank you.",
  notYours: "This alert was not sent to you: only its recipient can acknowledge it.",
  unknown: "Klaxon does not know this alert any more.",
  failed: "Klaxon could not record that. Please press again."
} as const;

/**
 * Receives button presses by long polling getUpdates (the box sits behind NAT, so no webhook).
 * The offset is committed to the journal after each update is handled: a restart resumes after
 * the last handled press and Telegram, seeing the higher offset, forgets it. A crash between
 * handling and committing replays that one press, which is harmless: acknowledging is idempotent.
 */
export class TelegramUpdatesPoller {
  private stopper: AbortController | null = null;
  private loop: Promise<void> | null = null;
  private state: PollerSnapshot["state"] = "stopped";
  private lastUpdateAt: string | null = null;
  private lastError: string | null = null;

  /** Ends the pause after a failed poll early: set while pausing. */
  private wake: (() => void) | null = null;

  constructor(private readonly parts: UpdatesPollerParts) {
    // The probe seeing Telegram again ends the pause at once, so presses flow as soon as the link is back.
    parts.connectivity.onSuccess(() => this.wake?.());
  }

  get snapshot(): PollerSnapshot {
    const {journal, offsets, botId} = this.parts;
    return {
      state: this.state,
      next_offset: journal.read(() => offsets.nextOffset(botId)),
      last_update_at: this.lastUpdateAt,
      last_error: this.lastError
    };
  }

  start(): void {
    if (this.loop) return;
    const stopper = new AbortController();
    this.stopper = stopper;
    this.loop = this.run(stopper.signal);
  }

  async stop(): Promise<void> {
    this.stopper?.abort(new Error("the gateway is stopping"));
    await this.loop;
    this.loop = null;
    this.stopper = null;
    this.state = "stopped";
  }

  /** One long poll and the handling of what it brought. */
  async pollOnce(signal?: AbortSignal): Promise<void> {
    const {api, botId, offsets, journal, connectivity, pollTimeoutSeconds, clock} = this.parts;
    const updates = await api.getUpdates(
      journal.read(() => offsets.nextOffset(botId)),
      pollTimeoutSeconds,
      signal
    );
    connectivity.observe({ok: true});
    for (const update of updates) {
      if (update.callback_query) await this.handlePress(update.callback_query, signal);
      await journal.write(() => offsets.save(botId, update.update_id + 1, isoTimestamp(clock.now())));
      this.lastUpdateAt = isoTimestamp(clock.now());
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      this.state = failures === 0 ? "polling" : "retrying";
      try {
        await this.pollOnce(signal);
        failures = 0;
        this.lastError = null;
      } catch (error) {
        if (signal.aborted) break;
        failures++;
        this.lastError = (error as Error).message;
        const observation = observationOf(error);
        if (observation) this.parts.connectivity.observe(observation);
        this.parts.logger.warn("Telegram update polling failed; retrying", {error: error as Error, failures});
        const pauseMs = Math.max(
          (error instanceof BotApiError ? (error.retryAfterSeconds ?? 0) : 0) * 1000,
          Math.min(RETRY_MIN_MS * 2 ** (failures - 1), RETRY_MAX_MS)
        );
        await this.pause(pauseMs, signal);
      }
    }
  }

  private pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, {once: true});
      this.wake = done;
    });
  }

  private async handlePress(query: CallbackQuery, signal?: AbortSignal): Promise<void> {
    const {journal, callbacks, acknowledgements, logger} = this.parts;
    const token = callbackToken(query.data);
    const callback = token ? journal.read(() => callbacks.get(token)) : null;
    if (!callback) return this.answer(query, ANSWERS.unknown, signal);
    const pressedIn = query.message ? String(query.message.chat.id) : null;
    if (String(query.from.id) !== callback.chat_id && pressedIn !== callback.chat_id) {
      logger.warn("Acknowledge pressed outside the chat the alert was sent to; refused", {
        telegram_user: query.from.id,
        chat: pressedIn,
        sent_to: callback.chat_id
      });
      return this.answer(query, ANSWERS.notYours, signal);
    }
    const by = displayName(query.from);
    try {
      await acknowledgements.acknowledge(callback.notification_ids, by, "telegram_voice", [
        String(query.from.id),
        callback.chat_id
      ]);
    } catch (error) {
      logger.error("could not acknowledge from Telegram", {
        notifications: callback.notification_ids,
        error: error as Error
      });
      return this.answer(query, ANSWERS.failed, signal);
    }
    logger.info("acknowledged from Telegram", {notifications: callback.notification_ids, by});
    await this.answer(query, ANSWERS.acknowledged, signal);
    if (query.message?.text) {
      await this.parts.api
        .editMessageText(
          String(query.message.chat.id),
          query.message.message_id,
          acknowledgedText(query.message.text, by),
          signal
        )
        .catch((error) => logger.info("could not edit the acknowledged message", {error: error as Error}));
    }
  }

  // Telegram shows a spinner until the press is answered; an answer that fails (the press is too
  // old, the link dropped) costs nothing but that spinner, so it is logged, not retried.
  private async answer(query: CallbackQuery, text: string, signal?: AbortSignal): Promise<void> {
    await this.parts.api
      .answerCallbackQuery(query.id, text, signal)
      .catch((error) => this.parts.logger.info("could not answer a button press", {error: error as Error}));
  }
}
