import {createServer, type IncomingMessage, type ServerResponse} from "node:http";
import type {AddressInfo, Socket} from "node:net";
import {UpdateQueue} from "./telegram-bot-api-updates.js";
import {BOT, fail, ok, parseParams, readBody} from "./telegram-bot-api-wire.js";

/** A call the fake received, with its parameters (JSON, form or multipart) and, for sendVoice, the audio bytes. */
export interface BotApiRequest {
  method: string;
  params: Record<string, any>;
  voice: Buffer | null;
}

/** A message the bot sent, as the fake keeps it: edits change `text` and `reply_markup` in place. */
export interface BotMessage {
  message_id: number;
  chat_id: string;
  kind: "voice" | "text";
  text: string | null;
  voice: Buffer | null;
  caption: string | null;
  reply_markup: any;
}

/** A Bot API error answer, as api.telegram.org writes it, or a request left without any answer. */
export type BotApiReply = {error_code: number; description: string; retry_after?: number} | "hang";

/** How the way to Telegram fails: connections refused, requests never answered, or Telegram's own servers failing (500). */
export type WanFault = "refuse" | "hang" | "error";

/** A person pressing an inline button: by default from the chat the message is in. */
export interface Press {
  message: BotMessage;
  data: string;
  from?: {id: number; first_name: string; last_name?: string; username?: string};
  /** The chat the press comes from, when it is not the message's own chat (a forwarded copy, a stranger). */
  chatId?: string;
}

/**
 * A loopback stand-in for api.telegram.org, for the methods Klaxon calls: getMe, sendVoice
 * (multipart with an OGG file), sendMessage, getUpdates (long polling with `timeout`; an
 * update is confirmed and forgotten once a call asks for a higher `offset`; a second poll ends
 * the first with 409 as Telegram does), answerCallbackQuery, editMessageText and
 * editMessageReplyMarkup. Answers use the real envelope: `{ok, result}` or `{ok: false,
 * error_code, description, parameters: {retry_after}}`; a wrong token gets 401.
 *
 * Test controls: `press` injects a callback_query, `script` queues error answers per method,
 * `block` makes a chat answer 403 as a person who blocked the bot, `cutWan` refuses
 * connections, leaves them hanging, or has Telegram answer 500 to every call until `restoreWan`.
 */
export interface FakeBotApi {
  /** The base URL to give `telegram.api_url`. */
  url: string;
  token: string;
  requests: BotApiRequest[];
  messages: BotMessage[];
  answers: Array<{callback_query_id: string; text: string | null}>;
  /** The next call of `method` to arrive (or one that arrived and was not yet awaited). */
  next(method: string): Promise<BotApiRequest>;
  calls(method: string): BotApiRequest[];
  script(method: string, ...replies: BotApiReply[]): void;
  block(chatId: string): void;
  press(press: Press): number;
  cutWan(mode: WanFault): Promise<void>;
  restoreWan(): Promise<void>;
  close(): Promise<void>;
}

/** An Ogg page starts with "OggS"; an Ogg Opus stream's first packet is the "OpusHead" header. */
export function isOggOpus(bytes: Buffer): boolean {
  return bytes.subarray(0, 4).toString("latin1") === "OggS" && bytes.subarray(0, 64).includes(Buffer.from("OpusHead"));
}

export async function startFakeBotApi(token = "777000:klaxon-test-token"): Promise<FakeBotApi> {
  const requests: BotApiRequest[] = [];
  const messages: BotMessage[] = [];
  const answers: FakeBotApi["answers"] = [];
  const scripted = new Map<string, BotApiReply[]>();
  const blocked = new Set<string>();
  const waiters = new Map<string, Array<(request: BotApiRequest) => void>>();
  const awaited = new Map<string, number>();
  const updates = new UpdateQueue();
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let nextMessageId = 1;
  let nextQueryId = 1;
  let wan: "up" | WanFault = "up";

  const record = (request: BotApiRequest) => {
    requests.push(request);
    const queue = waiters.get(request.method);
    if (queue?.length) {
      awaited.set(request.method, (awaited.get(request.method) ?? 0) + 1);
      queue.shift()?.(request);
    }
  };
  const calls = (method: string) => requests.filter((request) => request.method === method);

  const chatOf = (params: Record<string, any>) => String(params.chat_id ?? "");
  const storeMessage = (message: Omit<BotMessage, "message_id">): BotMessage => {
    const stored = {...message, message_id: nextMessageId++};
    messages.push(stored);
    return stored;
  };
  const view = (message: BotMessage) => ({
    message_id: message.message_id,
    date: Math.floor(Date.now() / 1000),
    chat: {id: Number(message.chat_id), type: Number(message.chat_id) < 0 ? "group" : "private"},
    from: BOT,
    ...(message.kind === "voice"
      ? {
          voice: {
            file_id: `voice-${message.message_id}`,
            file_unique_id: `v${message.message_id}`,
            duration: 2,
            mime_type: "audio/ogg",
            file_size: message.voice?.length
          },
          caption: message.caption ?? undefined
        }
      : {text: message.text}),
    ...(message.reply_markup ? {reply_markup: message.reply_markup} : {})
  });
  const findMessage = (params: Record<string, any>) =>
    messages.find((message) => message.chat_id === chatOf(params) && message.message_id === Number(params.message_id));

  const methods: Record<string, (params: Record<string, any>, voice: Buffer | null, response: ServerResponse) => void> =
    {
      getMe: (_params, _voice, response) => ok(response, BOT),
      sendMessage(params, _voice, response) {
        if (!params.text) return fail(response, 400, "Bad Request: message text is empty");
        ok(
          response,
          view(
            storeMessage({
              chat_id: chatOf(params),
              kind: "text",
              text: params.text,
              voice: null,
              caption: null,
              reply_markup: params.reply_markup ?? null
            })
          )
        );
      },
      sendVoice(params, voice, response) {
        if (!voice) return fail(response, 400, "Bad Request: there is no voice in the request");
        ok(
          response,
          view(
            storeMessage({
              chat_id: chatOf(params),
              kind: "voice",
              text: null,
              voice,
              caption: params.caption ?? null,
              reply_markup: params.reply_markup ?? null
            })
          )
        );
      },
      getUpdates: (params, _voice, response) => updates.getUpdates(params, response),
      answerCallbackQuery(params, _voice, response) {
        answers.push({callback_query_id: String(params.callback_query_id), text: params.text ?? null});
        ok(response, true);
      },
      editMessageText(params, _voice, response) {
        const message = findMessage(params);
        if (!message || message.kind !== "text") return fail(response, 400, "Bad Request: message to edit not found");
        if (
          message.text === params.text &&
          JSON.stringify(message.reply_markup) === JSON.stringify(params.reply_markup ?? null)
        ) {
          return fail(
            response,
            400,
            "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
          );
        }
        message.text = params.text;
        message.reply_markup = params.reply_markup ?? null;
        ok(response, view(message));
      },
      editMessageReplyMarkup(params, _voice, response) {
        const message = findMessage(params);
        if (!message) return fail(response, 400, "Bad Request: message to edit not found");
        message.reply_markup = params.reply_markup ?? null;
        ok(response, view(message));
      }
    };
  const SENDS = new Set(["sendMessage", "sendVoice"]);

  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (wan === "hang") {
      hanging.add(response);
      return;
    }
    const body = await readBody(request);
    if (wan === "error") return fail(response, 500, "Internal Server Error");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)/.exec(new URL(request.url ?? "/", "http://fake").pathname);
    if (!match) return fail(response, 404, "Not Found");
    const [, givenToken, method] = match;
    if (givenToken !== token) return fail(response, 401, "Unauthorized");
    const handler = methods[method];
    if (!handler) return fail(response, 404, "Not Found");
    let parsed: {params: Record<string, any>; voice: Buffer | null};
    try {
      parsed = await parseParams(request, body);
    } catch {
      return fail(response, 400, "Bad Request: can't parse request parameters");
    }
    record({method, ...parsed});
    const reply = scripted.get(method)?.shift();
    if (reply === "hang") return void hanging.add(response);
    if (reply) return fail(response, reply.error_code, reply.description, reply.retry_after);
    if (SENDS.has(method) && blocked.has(chatOf(parsed.params)))
      return fail(response, 403, "Forbidden: bot was blocked by the user");
    handler(parsed.params, parsed.voice, response);
  };
  // A fault in this fake must not pass for Telegram's answer: it is printed and the client sees the connection drop.
  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      console.error("fake Bot API failed:", error);
      response.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const {port} = server.address() as AddressInfo;

  const dropHanging = () => {
    for (const response of hanging) response.socket?.destroy();
    hanging.clear();
  };

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    messages,
    answers,
    calls,
    next(method) {
      const seen = awaited.get(method) ?? 0;
      const arrived = calls(method);
      if (seen < arrived.length) {
        awaited.set(method, seen + 1);
        return Promise.resolve(arrived[seen]);
      }
      return new Promise((resolve) => waiters.set(method, [...(waiters.get(method) ?? []), resolve]));
    },
    script(method, ...replies) {
      scripted.set(method, [...(scripted.get(method) ?? []), ...replies]);
    },
    block(chatId) {
      blocked.add(chatId);
    },
    press({message, data, from, chatId}) {
      const chat = chatId ?? message.chat_id;
      const user = from ?? {id: Number(chat), first_name: "Maria", last_name: "Keller", username: "maria_k"};
      return updates.push({
        id: `cbq-${nextQueryId++}`,
        from: {...user, is_bot: false},
        chat_instance: `ci-${chat}`,
        message: {...view(message), chat: {id: Number(chat), type: Number(chat) < 0 ? "group" : "private"}},
        data
      });
    },
    async cutWan(mode) {
      wan = mode;
      const polling = updates.abandonPoll();
      if (polling) hanging.add(polling);
      if (mode === "refuse") {
        const closed = new Promise<void>((done) => server.close(() => done()));
        for (const socket of sockets) socket.destroy();
        dropHanging();
        await closed;
      }
    },
    async restoreWan() {
      dropHanging();
      if (wan === "refuse") await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
      wan = "up";
    },
    close: () =>
      new Promise<void>((done) => {
        updates.close();
        dropHanging();
        for (const socket of sockets) socket.destroy();
        if (!server.listening) return done();
        server.close(() => done());
      })
  };
}
