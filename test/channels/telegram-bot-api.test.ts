import {afterEach, describe, expect, it} from "vitest";
import {BotApiClient, BotApiError} from "../../src/channels/telegram/bot-api-client.js";
import {createLogger} from "../../src/lib/logger.js";
import {startFakeBotApi, type FakeBotApi} from "../support/telegram-bot-api.js";

// A token the logger's generic pattern does not recognise, so only the client's own care keeps it out.
const TOKEN = "4242:klaxon-client-test-token";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: {token?: string; requestTimeoutMs?: number; maxRetryAfterSeconds?: number} = {}) {
  const api = await startFakeBotApi(TOKEN);
  cleanups.push(() => api.close());
  const logLines: string[] = [];
  const client = new BotApiClient({
    apiUrl: api.url,
    token: options.token ?? TOKEN,
    requestTimeoutMs: options.requestTimeoutMs ?? 2000,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 5,
    logger: createLogger("debug", (line) => logLines.push(line))
  });
  return {api, client, logLines};
}

async function failureOf(promise: Promise<unknown>): Promise<BotApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught
  );
  expect(error).toBeInstanceOf(BotApiError);
  return error as BotApiError;
}

const textMessage = async (api: FakeBotApi, client: BotApiClient) => {
  await client.sendMessage("111", "Disk full", null);
  return api.messages.at(-1)!;
};

describe("Bot API client against the loopback Bot API", () => {
  it("unwraps results and sends JSON parameters, with the inline keyboard", async () => {
    const {api, client} = await setup();
    expect((await client.getMe()).is_bot).toBe(true);
    const keyboard = {inline_keyboard: [[{text: "Acknowledge", callback_data: "ack:abc"}]]};
    const sent = await client.sendMessage("111", "Disk full on db1", keyboard);
    expect(sent.chat.id).toBe(111);
    expect(api.messages).toEqual([
      expect.objectContaining({chat_id: "111", kind: "text", text: "Disk full on db1", reply_markup: keyboard})
    ]);
  });

  it("uploads a voice note as multipart with the caption", async () => {
    const {api, client} = await setup();
    const ogg = Buffer.from("OggS fake audio bytes");
    await client.sendVoice("111", ogg, "CRITICAL · plc-7");
    expect(api.messages[0]).toMatchObject({kind: "voice", chat_id: "111", caption: "CRITICAL · plc-7"});
    expect(api.messages[0].voice?.equals(ogg)).toBe(true);
  });

  it("edits a message and answers a button press", async () => {
    const {api, client} = await setup();
    const message = await textMessage(api, client);
    await client.editMessageText("111", message.message_id, "Disk full\n\nAcknowledged by Maria");
    expect(api.messages[0].text).toBe("Disk full\n\nAcknowledged by Maria");
    await client.answerCallbackQuery("cbq-1", "Acknowledged");
    expect(api.answers).toEqual([{callback_query_id: "cbq-1", text: "Acknowledged"}]);
  });

  it("long-polls getUpdates: waits for a press, and an offset past an update confirms it", async () => {
    const {api, client} = await setup();
    const message = await textMessage(api, client);
    const polling = client.getUpdates(0, 5);
    await api.next("getUpdates");
    const updateId = api.press({message, data: "ack:abc"});
    const updates = await polling;
    expect(
      updates.map((update) => [update.update_id, update.callback_query?.data, update.callback_query?.from.id])
    ).toEqual([[updateId, "ack:abc", 111]]);
    // Not yet confirmed: asked again from the start, the same update comes back.
    expect((await client.getUpdates(0, 0)).map((update) => update.update_id)).toEqual([updateId]);
    expect(await client.getUpdates(updateId + 1, 0)).toEqual([]);
    expect(await client.getUpdates(0, 0)).toEqual([]);
  });

  it("answers a long poll with nothing when its timeout passes", async () => {
    const {client} = await setup();
    expect(await client.getUpdates(0, 1)).toEqual([]);
  });

  it("a wrong token is 'unauthorized', and the token appears in no error", async () => {
    const {client} = await setup({token: "4242:a-wrong-token-value"});
    const error = await failureOf(client.getMe());
    expect(error).toMatchObject({failure: "unauthorized", errorCode: 401, message: "Telegram getMe: 401 Unauthorized"});
  });

  it("waits out a 429's retry_after and repeats the call", async () => {
    const {api, client, logLines} = await setup();
    api.script("sendMessage", {error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1});
    await client.sendMessage("111", "Disk full", null);
    expect(api.calls("sendMessage")).toHaveLength(2);
    expect(api.messages).toHaveLength(1);
    expect(logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({
        msg: "Telegram flood control: waiting before repeating the call",
        method: "sendMessage",
        retry_after_seconds: 1
      })
    );
  });

  it("a 429 asking for longer than the cap fails the call as flood, with the wait", async () => {
    const {api, client} = await setup({maxRetryAfterSeconds: 5});
    api.script("sendMessage", {error_code: 429, description: "Too Many Requests: retry after 600", retry_after: 600});
    const error = await failureOf(client.sendMessage("111", "Disk full", null));
    expect(error).toMatchObject({failure: "flood", errorCode: 429, retryAfterSeconds: 600});
    expect(api.calls("sendMessage")).toHaveLength(1);
  });

  it("a blocked bot (403) and an unknown chat (400) are failures of the contact", async () => {
    const {api, client} = await setup();
    api.block("111");
    expect(await failureOf(client.sendMessage("111", "Disk full", null))).toMatchObject({
      failure: "contact",
      errorCode: 403,
      message: "Telegram sendMessage: 403 Forbidden: bot was blocked by the user"
    });
    api.script("sendMessage", {error_code: 400, description: "Bad Request: chat not found"});
    expect(await failureOf(client.sendMessage("222", "Disk full", null))).toMatchObject({
      failure: "contact",
      errorCode: 400
    });
  });

  it("any other 400 is a refusal of the request, not of the contact", async () => {
    const {client} = await setup();
    expect(await failureOf(client.sendMessage("111", "", null))).toMatchObject({failure: "rejected", errorCode: 400});
  });

  it("5xx, a refused connection and a hung request all mean Telegram is unreachable", async () => {
    const {api, client} = await setup({requestTimeoutMs: 300});
    api.script("getMe", {error_code: 502, description: "Bad Gateway"});
    expect(await failureOf(client.getMe())).toMatchObject({failure: "unreachable", errorCode: 502});

    await api.cutWan("hang");
    expect(await failureOf(client.getMe())).toMatchObject({
      failure: "unreachable",
      message: "Telegram getMe: no answer within 300 ms"
    });
    await api.restoreWan();

    await api.cutWan("refuse");
    const refused = await failureOf(client.getMe());
    expect(refused.failure).toBe("unreachable");
    expect(refused.message).toMatch(/ECONNREFUSED|other side closed|socket/i);
    await api.restoreWan();
    expect((await client.getMe()).is_bot).toBe(true);
  });

  it("an abort from the caller is passed through as the caller's reason", async () => {
    const {api, client} = await setup();
    await api.cutWan("hang");
    const stopper = new AbortController();
    const call = client.getMe(stopper.signal);
    stopper.abort(new Error("the gateway is stopping"));
    await expect(call).rejects.toThrow("the gateway is stopping");
  });
});
