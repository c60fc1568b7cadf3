import {afterEach, describe, expect, it} from "vitest";
import {systemClock} from "../../src/lib/clock.js";
import {eventually} from "../support/eventually.js";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ModemSimulator} from "../support/modem-simulator.js";
import {startFakeBotApi, type FakeBotApi} from "../support/telegram-bot-api.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "../support/webhook-receiver.js";

// The whole paging path of the production gateway, every peer real and on loopback: an alert
// comes in over HTTP, the simulated phone rings on a real pty, the speech carries the alert,
// key 1 acknowledges, and the signed webhook notification.acknowledged goes out. Then the same
// with the internet gone: Telegram (first in the chain) is skipped at once and the phone rings.

const PHONE = "+4915112345678";
const CHAT = "4242";
const TOKEN = "777000:klaxon-e2e-token";

interface Rig {
  gw: TestGateway;
  modem: ModemSimulator;
  telegram: FakeBotApi;
  receiver: WebhookReceiver;
  secret: string;
  maria: string;
}

let rig: Rig | null = null;
afterEach(async () => {
  if (!rig) return;
  await rig.gw.stop();
  await Promise.all([rig.modem.stop(), rig.telegram.close(), rig.receiver.close()]);
  rig = null;
});

async function startRig(): Promise<Rig> {
  const modem = await ModemSimulator.start("sim7600", {call: {outcome: "answer", afterMs: 80, keys: ["1"]}});
  const telegram = await startFakeBotApi(TOKEN);
  const receiver = await startWebhookReceiver(systemClock);
  const gw = await startTestGateway(
    {
      modem: {
        port: modem.devicePath,
        profile: "sim7600",
        ring_timeout_seconds: 3,
        key_wait_seconds: 1,
        speech_repeats: 2
      },
      telegram: {
        bot_token: TOKEN,
        api_url: telegram.url,
        poll_timeout_seconds: 1,
        probe_interval_seconds: 0.2,
        probe_max_backoff_seconds: 0.4,
        request_timeout_seconds: 1
      }
    },
    {drivers: "production"}
  );
  const hook = await gw.call("POST", "/api/v1/webhooks", {
    body: {url: receiver.url, events: ["notification.acknowledged"]}
  });
  expect(hook.status).toBe(201);
  const maria = await createRecipient(gw, {
    name: "Maria",
    phone: PHONE,
    telegram_id: CHAT,
    channel_order: ["telegram_voice", "voice_call"],
    escalation: {ack_timeout_seconds: 3600, repeat: 0}
  });
  rig = {gw, modem, telegram, receiver, secret: hook.body.secret, maria};
  return rig;
}

const telegramState = (r: Rig) =>
  r.gw
    .call("GET", "/readyz")
    .then((answer) => answer.body.channels.find((channel: {channel: string}) => channel.channel === "telegram_voice"));

async function send(r: Rig, message: string): Promise<string> {
  const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: r.maria, message, priority: "critical", source: "press-7"}
  });
  expect(answer.status).toBe(202);
  return answer.body.notification_uuid;
}

/** Phone rang, alert spoken, key 1, acknowledged by voice; the signed webhook says so. */
async function expectAnsweredByPhone(r: Rig, id: string, message: string): Promise<void> {
  expect(await r.modem.waitForCommand("ATD")).toBe(`ATD${PHONE};`);
  const acknowledged = await eventually(
    "the acknowledgement",
    () => r.gw.call("GET", `/api/v1/notifications/${id}`).then((answer) => answer.body),
    (n) => n.status === "acknowledged"
  );
  expect(acknowledged).toMatchObject({acknowledged_via: "voice_call", acknowledged_by: `Maria (${PHONE})`});
  const speech = r.modem.received.filter((command) => command.startsWith("AT+CTTS=2,"));
  expect(speech[0]).toContain(`Critical. From press-7. ${message}.`);

  const delivery = await r.receiver.next();
  const event = verifyDelivery(delivery, r.secret);
  expect(event).toMatchObject({
    type: "notification.acknowledged",
    data: {notification: {id, status: "acknowledged", acknowledged_via: "voice_call"}}
  });
}

describe("paging end to end through the production gateway", () => {
  it("pages by Telegram first, then rings the phone; key 1 acknowledges and the webhook goes out", async () => {
    const r = await startRig();
    await eventually(
      "Telegram to be reachable",
      () => telegramState(r),
      (state) => state.available
    );
    const id = await send(r, "Oil temperature high");
    // Telegram is the first step: the voice note and the button arrive; nobody presses it.
    await r.telegram.next("sendMessage");
    expect(r.modem.received.some((command) => command.startsWith("ATD"))).toBe(false);
    // Maria's step on Telegram timed out (brought forward here, as key 9 would): the phone rings.
    r.gw.gateway.journal.db
      .prepare("UPDATE escalations SET next_step_at = ? WHERE notification_id = ?")
      .run(new Date().toISOString(), id);
    await r.gw.gateway.services.runner.tick();
    await expectAnsweredByPhone(r, id, "Oil temperature high");
  });

  it("with the internet cut, skips Telegram at once and rings the phone; nothing is relayed for the acknowledged alert", async () => {
    const r = await startRig();
    await eventually(
      "Telegram to be reachable",
      () => telegramState(r),
      (state) => state.available
    );
    await r.telegram.cutWan("refuse");
    await eventually(
      "the probe to see the WAN down",
      () => telegramState(r),
      (state) => state.details?.link?.state === "offline"
    );

    const id = await send(r, "Hydraulic pressure low");
    await expectAnsweredByPhone(r, id, "Hydraulic pressure low");
    await r.gw.gateway.services.runner.idle();
    const n = (await r.gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(n.attempts.map((attempt: {channel: string; outcome: string}) => [attempt.channel, attempt.outcome])).toEqual(
      [
        ["telegram_voice", "skipped"],
        ["voice_call", "answered"]
      ]
    );
    expect(n.attempts[0].error).toMatch(/unreachable/);

    // The link returns: the kept Telegram message is dropped, the alert having been acknowledged.
    await r.telegram.restoreWan();
    await eventually(
      "the relay queue to drain",
      () => telegramState(r),
      (state) => state.available && state.details.relay.pending === 0
    );
    expect(r.telegram.calls("sendMessage")).toEqual([]);
  });
});
