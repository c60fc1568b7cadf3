import type {Logger} from "../../lib/logger.js";
import {REDACTED} from "../../lib/redact.js";
import {abortError} from "../../lib/abort-error.js";

/**
 * How a Bot API call failed, by what the caller should do about it:
 * - `unreachable`: no answer, or Telegram's side is broken (5xx): the WAN or Telegram is down.
 * - `flood`: 429, wait `retryAfterSeconds`.
 * - `contact`: this chat cannot be reached (403 bot blocked or kicked, 400 chat not found): permanent for that contact.
 * - `unauthorized`: the bot token was refused: nothing will work until an operator fixes it.
 * - `rejected`: any other refusal of this one request.
 */
export type BotApiFailure = "unreachable" | "flood" | "contact" | "unauthorized" | "rejected";

/** A failed Bot API call. The message never contains the bot token. */
export class BotApiError extends Error {
  override name = "BotApiError";
  constructor(
    message: string,
    readonly failure: BotApiFailure,
    readonly errorCode: number | null = null,
    readonly retryAfterSeconds: number | null = null
  ) {
    super(message);
  }
}

export interface BotApiOptions {
  /** e.g. https://api.telegram.org; a test points it at a loopback server. */
  apiUrl: string;
  token: string;
  /** How long one request may take; a long poll gets its own poll timeout on top. */
  requestTimeoutMs: number;
  /** A 429 asking for at most this long is waited out and the call repeated; a longer one fails the call. */
  maxRetryAfterSeconds: number;
  logger: Logger;
}

/** The parts of Telegram's objects Klaxon reads. */
export interface TelegramUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export interface TelegramMessage {
  message_id: number;
  chat: {id: number};
  text?: string;
}

export interface CallbackQuery {
  id: string;
  from: TelegramUser;
  message?: TelegramMessage;
  data?: string;
}

export interface TelegramUpdate {
  update_id: number;
  callback_query?: CallbackQuery;
}

export interface InlineKeyboard {
  inline_keyboard: Array<Array<{text: string; callback_data: string}>>;
}

interface Envelope<T> {
  ok: boolean;
  result?: T;
  error_code?: number;
  description?: string;
  parameters?: {retry_after?: number};
}

// Descriptions Telegram gives when the chat itself is the problem, not the request.
const CONTACT_GONE =
  /chat not found|user not found|peer_id_invalid|bot was blocked|bot was kicked|user is deactivated|bot can't initiate conversation/i;
const MAX_FLOOD_WAITS = 3;

function classify(status: number, description: string): BotApiFailure {
  if (status === 429) return "flood";
  // Telegram answers 404 for a token it cannot parse, 401 for one it does not know.
  if (status === 401 || status === 404) return "unauthorized";
  if (status >= 500) return "unreachable";
  if (status === 403 || CONTACT_GONE.test(description)) return "contact";
  return "rejected";
}

function abortableWait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      if (signal) reject(abortError(signal));
    };
    signal?.addEventListener("abort", onAbort, {once: true});
  });
}

/**
 * A small Bot API client on fetch. Every call has a timeout, answers are unwrapped from the
 * `{ok, result}` envelope, and failures become a BotApiError by what to do about them. Flood
 * control (429) is honoured here: the call waits `retry_after` and is repeated, up to a cap.
 * The token is part of every URL path, so URLs are never logged and the token is cut out of
 * every error message.
 */
export class BotApiClient {
  constructor(private readonly options: BotApiOptions) {}

  /** The bot's own account; also the connectivity probe. */
  getMe(signal?: AbortSignal): Promise<TelegramUser> {
    return this.call("getMe", {}, {signal});
  }

  sendMessage(
    chatId: string,
    text: string,
    replyMarkup: InlineKeyboard | null,
    signal?: AbortSignal
  ): Promise<TelegramMessage> {
    return this.call(
      "sendMessage",
      {chat_id: chatId, text, ...(replyMarkup ? {reply_markup: replyMarkup} : {})},
      {signal}
    );
  }

  /** Sends an OGG/Opus voice note as a multipart upload. */
  sendVoice(chatId: string, ogg: Buffer, caption: string | null, signal?: AbortSignal): Promise<TelegramMessage> {
    return this.call(
      "sendVoice",
      () => {
        const form = new FormData();
        form.set("chat_id", chatId);
        if (caption) form.set("caption", caption);
        form.set("voice", new Blob([new Uint8Array(ogg)], {type: "audio/ogg"}), "alert.ogg");
        return form;
      },
      {signal}
    );
  }

  /** Long polling: waits up to `timeoutSeconds` on Telegram's side for updates at or after `offset`. */
  getUpdates(offset: number, timeoutSeconds: number, signal?: AbortSignal): Promise<TelegramUpdate[]> {
    return this.call(
      "getUpdates",
      {offset, timeout: timeoutSeconds, allowed_updates: ["callback_query"]},
      {signal, extraTimeoutMs: timeoutSeconds * 1000}
    );
  }

  answerCallbackQuery(callbackQueryId: string, text: string, signal?: AbortSignal): Promise<boolean> {
    return this.call("answerCallbackQuery", {callback_query_id: callbackQueryId, text}, {signal});
  }

  /** Replaces a message's text; without a keyboard its buttons disappear. */
  editMessageText(chatId: string, messageId: number, text: string, signal?: AbortSignal): Promise<TelegramMessage> {
    return this.call("editMessageText", {chat_id: chatId, message_id: messageId, text}, {signal});
  }

  private async call<T>(
    method: string,
    params: Record<string, unknown> | (() => FormData),
    {signal, extraTimeoutMs = 0}: {signal?: AbortSignal; extraTimeoutMs?: number}
  ): Promise<T> {
    for (let wait = 0; ; wait++) {
      try {
        return await this.once<T>(method, params, signal, extraTimeoutMs);
      } catch (error) {
        const flood = error instanceof BotApiError && error.failure === "flood" ? error : null;
        const retryAfter = flood?.retryAfterSeconds ?? null;
        if (!flood || retryAfter === null || retryAfter > this.options.maxRetryAfterSeconds || wait >= MAX_FLOOD_WAITS)
          throw error;
        this.options.logger.warn("Telegram flood control: waiting before repeating the call", {
          method,
          retry_after_seconds: retryAfter
        });
        await abortableWait(retryAfter * 1000, signal);
      }
    }
  }

  private async once<T>(
    method: string,
    params: Record<string, unknown> | (() => FormData),
    signal: AbortSignal | undefined,
    extraTimeoutMs: number
  ): Promise<T> {
    const timeoutMs = this.options.requestTimeoutMs + extraTimeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    let response: Response;
    let envelope: Envelope<T>;
    try {
      response = await fetch(`${this.options.apiUrl.replace(/\/+$/, "")}/bot${this.options.token}/${method}`, {
        method: "POST",
        ...(typeof params === "function"
          ? {body: params()}
          : {headers: {"Content-Type": "application/json"}, body: JSON.stringify(params)}),
        signal: AbortSignal.any(signals)
      });
      envelope = (await response.json()) as Envelope<T>;
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      const failure = error as Error & {cause?: {message?: string}};
      const reason =
        failure.name === "TimeoutError"
          ? `no answer within ${timeoutMs} ms`
          : failure instanceof SyntaxError
            ? "the answer is not Bot API JSON"
            : (failure.cause?.message ?? failure.message);
      throw new BotApiError(this.scrub(`Telegram ${method}: ${reason}`), "unreachable");
    }
    if (envelope.ok && response.ok) return envelope.result as T;
    const status = envelope.error_code ?? response.status;
    const description = envelope.description ?? `HTTP ${response.status}`;
    throw new BotApiError(
      this.scrub(`Telegram ${method}: ${status} ${description}`),
      classify(status, description),
      status,
      envelope.parameters?.retry_after ?? null
    );
  }

  private scrub(text: string): string {
    return this.options.token ? text.split(this.options.token).join(REDACTED) : text;
  }
}
