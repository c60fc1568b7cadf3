import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {isOggOpus, startFakeBotApi, type BotMessage, type FakeBotApi} from "../support/telegram-bot-api.js";
import {ANSWERS} from "../../src/channels/telegram/updates-poller.js";

// Not shaped like a real token, so the logger's generic pattern cannot hide a leak: only our own care keeps it out.
const TOKEN = "4242:klaxon-e2e-secret-token";
const CHAT = "4711";

interface Rig {
  api: FakeBotApi;
  gw: TestGateway;
  recipient(fields?: Record<string, unknown>): Promise<string>;
  send(recipient: string, message?: string): Promise<string>;
  notification(id: string): Promise<any>;
  telegram(): Promise<any>;
  /** The written alert (the one with the button) the fake received, once it has. */
  alertMessage(): Promise<BotMessage>;
}

let rig: Rig | null = null;
afterEach(async () => {
  if (!rig) return;
  const {gw, api} = rig;
  rig = null;
  await gw.stop();
  await api.close();
  // Every test: the bot token is in the URL path of every call, and must be in no log line.
  expect(gw.logLines.length).toBeGreaterThan(0);
  expect(gw.logLines.filter((line) => line.includes(TOKEN))).toEqual([]);
});

async function makeRig(): Promise<Rig> {
  const api = await startFakeBotApi(TOKEN);
  const gw = await startTestGateway(
    {
      telegram: {
        bot_token: TOKEN,
        api_url: api.url,
        poll_timeout_seconds: 2,
        probe_interval_seconds: 0.2,
        probe_max_backoff_seconds: 0.4,
        request_timeout_seconds: 1,
        max_retry_after_seconds: 5
      }
    },
    {drivers: "production"}
  );
  rig = {
    api,
    gw,
    async recipient(fields = {}) {
      const answer = await gw.call("POST", "/api/v1/recipients", {
        body: {
          name: "Maria",
          telegram_id: CHAT,
          channel_order: ["telegram_voice"],
          escalation: {ack_timeout_seconds: 60, repeat: 0},
          ...fields
        }
      });
      expect(answer.status).toBe(201);
      return answer.body.uuid;
    },
    async send(recipient, message = "Press 7 hydraulic oil over 80 °C") {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message, priority: "critical", source: "plc-7"}
      });
      expect(answer.status).toBe(202);
      return answer.body.notification_uuid;
    },
    async notification(id) {
      await gw.gateway.services.runner.idle();
      return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    },
    async telegram() {
      const ready = await gw.call("GET", "/readyz");
      return ready.body.channels.find((channel: any) => channel.channel === "telegram_voice");
    },
    async alertMessage() {
      await api.next("sendMessage");
      return api.messages.filter((message) => message.kind === "text").at(-1)!;
    }
  };
  return rig;
}

const online = (r: Rig) =>
  eventually(
    "the probe to see Telegram",
    () => r.telegram(),
    (channel) => channel.details.link.state === "online"
  );
const offline = (r: Rig) =>
  eventually(
    "the probe to see the WAN down",
    () => r.telegram(),
    (channel) => channel.details.link.state === "offline"
  );
const buttonData = (message: BotMessage): string => message.reply_markup.inline_keyboard[0][0].callback_data;

describe("telegram_voice over the loopback Bot API (production wiring)", () => {
  it("sends a spoken Ogg Opus voice note and the alert with an Acknowledge button", async () => {
    const r = await makeRig();
    await online(r);
    const id = await r.send(await r.recipient());
    const voice = await r.api.next("sendVoice");
    const message = await r.alertMessage();

    expect(voice.params.chat_id).toBe(CHAT);
    expect(isOggOpus(voice.voice!)).toBe(true);
    expect(voice.params.caption).toBe("🚨 CRITICAL · plc-7");
    expect(message.chat_id).toBe(CHAT);
    expect(message.text).toBe("🚨 CRITICAL · plc-7\nPress 7 hydraulic oil over 80 °C");
    expect(message.reply_markup.inline_keyboard).toEqual([
      [{text: "Acknowledge", callback_data: expect.stringMatching(/^ack:[A-Za-z0-9_-]{22}$/)}]
    ]);
    // Voice first, so the notification a phone shows is the one that speaks.
    expect(r.api.requests.findIndex((request) => request.method === "sendVoice")).toBeLessThan(
      r.api.requests.findIndex((request) => request.method === "sendMessage")
    );

    const n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.attempts).toEqual([
      expect.objectContaining({
        channel: "telegram_voice",
        outcome: "delivered",
        detail: "voice note and message with an Acknowledge button sent",
        target: expect.not.stringContaining(CHAT)
      })
    ]);
    const details = (await r.telegram()).details;
    expect(details.voice_notes).toEqual({available: true, reason: null});
    expect(details.updates.state).toBe("polling");
  });

  it("a press from the recipient's chat acknowledges; the press is answered and the message edited", async () => {
    const r = await makeRig();
    const maria = await r.recipient();
    const id = await r.send(maria);
    const message = await r.alertMessage();
    r.api.press({message, data: buttonData(message)});

    const n = await eventually(
      "the acknowledgement",
      () => r.notification(id),
      (view) => view.status === "acknowledged"
    );
    expect(n).toMatchObject({acknowledged_via: "telegram_voice", acknowledged_by: "Maria Keller (@maria_k)"});
    const audit = (await r.gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.acknowledged`)).body
      .items;
    expect(audit).toMatchObject([{actor: {type: "recipient", id: maria}, detail: {via: "telegram_voice"}}]);
    await eventually(
      "the edit",
      () => r.api.messages.find((m) => m.message_id === message.message_id)!.reply_markup,
      (markup) => markup === null
    );
    expect(r.api.messages.find((m) => m.message_id === message.message_id)!.text).toBe(
      "🚨 CRITICAL · plc-7\nPress 7 hydraulic oil over 80 °C\n\n✅ Acknowledged by Maria Keller (@maria_k)"
    );
    expect(r.api.answers.map((answer) => answer.text)).toEqual([ANSWERS.acknowledged]);
  });

  it("a press from another chat is refused and acknowledges nothing", async () => {
    const r = await makeRig();
    const id = await r.send(await r.recipient());
    const message = await r.alertMessage();
    r.api.press({message, data: buttonData(message), chatId: "999", from: {id: 999, first_name: "Mallory"}});
    await eventually(
      "the refusal",
      () => r.api.answers.length,
      (count) => count === 1
    );
    expect(r.api.answers[0].text).toBe(ANSWERS.notYours);
    expect((await r.notification(id)).status).toBe("notifying");
    expect(r.api.calls("editMessageText")).toEqual([]);

    // An unknown button is answered too, so the person's spinner stops.
    r.api.press({message, data: "ack:not-a-token-we-made"});
    await eventually(
      "the second answer",
      () => r.api.answers.length,
      (count) => count === 2
    );
    expect(r.api.answers[1].text).toBe(ANSWERS.unknown);
    expect((await r.notification(id)).status).toBe("notifying");
  });

  it("honours a 429's retry_after and still delivers", async () => {
    const r = await makeRig();
    r.api.script("sendVoice", {error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1});
    const id = await r.send(await r.recipient());
    await r.alertMessage();
    expect(r.api.calls("sendVoice")).toHaveLength(2);
    expect((await r.notification(id)).attempts).toEqual([expect.objectContaining({outcome: "delivered"})]);
    expect(
      r.gw.logLines.some((line) => line.includes("Telegram flood control") && line.includes('"retry_after_seconds":1'))
    ).toBe(true);
  });

  it("a bot blocked by the person (403) fails the attempt for good and marks the contact unavailable", async () => {
    const r = await makeRig();
    r.api.block(CHAT);
    const maria = await r.recipient();
    const first = await r.send(maria);
    const failed = await eventually(
      "the failed attempt",
      () => r.notification(first),
      (n) => n.attempts[0]?.outcome === "failed"
    );
    expect(failed.attempts[0].error).toBe("Telegram sendVoice: 403 Forbidden: bot was blocked by the user");

    const recipient = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    expect(recipient.channels.find((channel: any) => channel.channel === "telegram_voice")).toEqual({
      channel: "telegram_voice",
      available: false,
      reason: expect.stringMatching(
        /^permanent failure since .*: Telegram sendVoice: 403 Forbidden: bot was blocked by the user$/
      ),
      verified_at: null
    });
    // Closed first, so the next alert is paged on its own instead of waiting behind this chain (storm grouping).
    expect((await r.gw.call("POST", `/api/v1/notifications/${first}/resolve`)).status).toBe(200);
    // A high alert skips the unusable contact and waits, saying why; a critical one would try it again.
    const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "Boiler 2 pressure high", priority: "high"}
    });
    const second = await r.notification(answer.body.notification_uuid);
    expect(second.attempts).toEqual([
      expect.objectContaining({
        channel: "telegram_voice",
        outcome: "skipped",
        error: "contact marked unusable after a permanent failure (see the recipient)"
      })
    ]);
    expect(second.status).toBe("notifying");
  });

  it("keeps the update offset across a restart: no press is replayed and none is lost", async () => {
    const r = await makeRig();
    const maria = await r.recipient();
    const first = await r.send(maria);
    const firstMessage = await r.alertMessage();
    const firstPress = r.api.press({message: firstMessage, data: buttonData(firstMessage)});
    await eventually(
      "the first acknowledgement",
      () => r.notification(first),
      (n) => n.status === "acknowledged"
    );
    const savedOffset = () =>
      (
        r.gw.gateway.journal.db.prepare("SELECT next_offset FROM telegram_offsets").get() as
          {next_offset: number} | undefined
      )?.next_offset;
    await eventually("the offset to be committed", savedOffset, (offset) => offset === firstPress + 1);

    const second = await r.send(maria, "Boiler 2 pressure high");
    const secondMessage = await r.alertMessage();
    // The second press arrives while the gateway is down.
    await r.gw.gateway.stop();
    const secondPress = r.api.press({
      message: secondMessage,
      data: buttonData(secondMessage),
      from: {id: Number(CHAT), first_name: "Jonas"}
    });
    const pollsBefore = r.api.calls("getUpdates").length;
    await r.gw.restart();

    const firstPoll = await eventually(
      "the first poll after the restart",
      () => r.api.calls("getUpdates")[pollsBefore],
      (poll) => poll !== undefined
    );
    expect(firstPoll.params.offset).toBe(firstPress + 1);
    const n = await eventually(
      "the press made while down",
      () => r.notification(second),
      (view) => view.status === "acknowledged"
    );
    expect(n.acknowledged_by).toBe("Jonas");
    await eventually("the second offset", savedOffset, (offset) => offset === secondPress + 1);
    expect(r.api.answers.map((answer) => answer.text)).toEqual([ANSWERS.acknowledged, ANSWERS.acknowledged]);
    expect((await r.notification(first)).acknowledged_by).toBe("Maria Keller (@maria_k)");
  });

  it("WAN cut: the Telegram step is skipped at once, the alert waits for the link loudly, and goes out once when it is back", async () => {
    const r = await makeRig();
    const maria = await r.recipient({phone: "+4915112345678", channel_order: ["telegram_voice", "voice_call"]});
    await online(r);
    await r.api.cutWan("refuse");
    await offline(r);

    const stillOpen = await r.send(maria, "Press 7 hydraulic oil over 80 °C");
    const ackedMeanwhile = await r.send(maria, "Boiler 2 pressure high");
    for (const id of [stillOpen, ackedMeanwhile]) {
      const n = await r.notification(id);
      // Telegram cannot be used and voice_call is left out of the plan (no modem is configured):
      // nothing was carried, so the alert waits for Telegram.
      expect(n.attempts.map((attempt: any) => [attempt.channel, attempt.outcome])).toEqual([
        ["telegram_voice", "skipped"]
      ]);
      expect(n.channels_left_out.map((out: {channel: string}) => out.channel)).toEqual(["voice_call"]);
      expect(n.attempts[0].error).toMatch(/^the Telegram Bot API is unreachable since \S+ \(Telegram \w+: .+\)$/);
      expect(n.status).toBe("notifying");
      expect(n.escalation.waiting_for.map((wait: {channel: string}) => wait.channel)).toEqual(["telegram_voice"]);
    }
    const ready = await r.gw.call("GET", "/readyz", {key: null});
    expect(ready.status).toBe(503);
    expect(ready.body.undeliverable.count).toBe(2);
    const channel = await r.telegram();
    expect(channel).toMatchObject({
      available: false,
      reason: expect.stringMatching(/unreachable/),
      details: {link: {state: "offline"}, relay: {pending: 0}}
    });
    expect(JSON.stringify(channel)).not.toContain(TOKEN);
    expect((await r.gw.call("POST", `/api/v1/notifications/${ackedMeanwhile}/ack`, {body: {by: "Jonas"}})).status).toBe(
      200
    );
    expect(r.api.calls("sendMessage")).toEqual([]);

    // The runner sees the link back and carries the waiting Telegram step of the alert still open.
    await r.api.restoreWan();
    const sent = await r.alertMessage();
    expect(sent.chat_id).toBe(CHAT);
    expect(sent.text).toMatch(/^🚨 CRITICAL · plc-7\nPress 7 hydraulic oil over 80 °C$/);
    expect(isOggOpus(r.api.messages.find((message) => message.kind === "voice")!.voice!)).toBe(true);

    // Several probes later it has still gone out once.
    const probes = r.api.calls("getMe").length;
    await eventually(
      "two more probes",
      () => r.api.calls("getMe").length,
      (count) => count >= probes + 2
    );
    expect(r.api.calls("sendMessage")).toHaveLength(1);

    // Its button acknowledges the alert.
    r.api.press({message: sent, data: buttonData(sent)});
    const n = await eventually(
      "the acknowledgement",
      () => r.notification(stillOpen),
      (view) => view.status === "acknowledged"
    );
    expect(n.acknowledged_via).toBe("telegram_voice");
  });

  it("a WAN that swallows requests (no answer) also counts as offline, and recovery is seen", async () => {
    const r = await makeRig();
    await online(r);
    await r.api.cutWan("hang");
    const channel = await offline(r);
    expect(channel.reason).toMatch(/no answer within 1000 ms/);
    await r.api.restoreWan();
    await online(r);
  });

  it("a delivery cut off by the link is kept and relayed when the link is back", async () => {
    const r = await makeRig();
    await online(r);
    r.api.script("sendMessage", "hang");
    const id = await r.send(await r.recipient());
    const failed = await eventually(
      "the cut-off attempt",
      () => r.notification(id),
      (n) => n.attempts[0]?.outcome === "failed"
    );
    expect(failed.attempts[0].error).toBe(
      "Telegram sendMessage: no answer within 1000 ms; kept to relay when Telegram is reachable again"
    );
    // The one that got no answer, then the relay.
    await r.api.next("sendMessage");
    const relayed = await r.alertMessage();
    expect(relayed.text).toMatch(/^⏳ Held while Telegram was unreachable/);
    await eventually(
      "the relay to finish",
      () => r.telegram(),
      (telegram) => telegram.details.relay.pending === 0
    );
  });
});
