import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {mailedAlerts, outcomes, startFaultRig, type FaultRig} from "../support/fault-rig.js";
import type {BotApiReply, WanFault} from "../support/telegram-bot-api.js";

// Telegram fails while people are being paged (recipients: Telegram first, then email): the
// escalation must reach email by the step's ack timeout (at once when Telegram is known to be
// down), /readyz must show the link's state and why, nothing accepted may go missing, and once
// Telegram answers again every message kept for it goes out once, as does every event.

let rig: FaultRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

const textsTo = (r: FaultRig, name: string) =>
  r.telegram!.messages.filter((message) => message.kind === "text" && message.chat_id === r.contacts(name).telegram_id);

async function onlineRig(): Promise<FaultRig> {
  rig = await startFaultRig({telegram: true});
  const r = rig;
  await eventually(
    "Telegram reachable",
    () => r.channel("telegram_voice"),
    (state) => state.details?.link.state === "online"
  );
  return r;
}

/** Telegram answers again: what was kept is relayed, and a few probes later it has still gone out once. */
async function expectRelayedOnce(r: FaultRig, name: string, message: string): Promise<void> {
  await eventually(
    "the relay to drain",
    () => r.channel("telegram_voice"),
    (state) => state.available && state.details?.relay.pending === 0
  );
  const probes = r.telegram!.calls("getMe").length;
  await eventually(
    "two more probes",
    () => r.telegram!.calls("getMe").length,
    (count) => count >= probes + 2
  );
  const texts = textsTo(r, name);
  expect(texts).toHaveLength(1);
  expect(texts[0].text).toMatch(
    new RegExp(`^⏳ Held while Telegram was unreachable \\(since \\S+\\)\\n\\n🚨 CRITICAL · press-7\\n${message}$`)
  );
}

const WAN_FAULTS: Array<{mode: WanFault; reason: RegExp}> = [
  {mode: "refuse", reason: /ECONNREFUSED/},
  {mode: "hang", reason: /no answer within 2000 ms/},
  {mode: "error", reason: /500 Internal Server Error/}
];

describe.each(WAN_FAULTS)("Telegram unreachable ($mode)", ({mode, reason}) => {
  it("skips Telegram at once for email, shows the link offline on /readyz, and carries the Telegram step once when it is back", async () => {
    const r = await onlineRig();
    const maria = await r.recipient("Maria", ["telegram_voice", "email"]);
    await r.telegram!.cutWan(mode);
    // The first failure seen may be a request the cut reset; the probes that follow see the fault itself.
    const telegram = await eventually(
      "the probe to see the link down",
      () => r.channel("telegram_voice"),
      (state) => !state.available && reason.test(state.reason ?? "")
    );
    expect(telegram).toMatchObject({details: {link: {state: "offline"}}});
    expect(telegram.reason).toMatch(/^the Telegram Bot API is unreachable since \S+ \(Telegram \w+: .+\)$/);

    const id = await r.send(maria, "Oil temperature high");
    let n = await r.notification(id);
    // No waiting on a link known to be down: the email went out in the same pass, on the same clock reading.
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "skipped"],
      ["email", "delivered"]
    ]);
    expect(n.attempts[0].error).toMatch(/^the Telegram Bot API is unreachable/);
    expect(n.attempts[1].started_at).toBe(n.attempts[0].started_at);
    expect(mailedAlerts(r)).toEqual([id]);
    // Nothing is kept for a relay: the skipped Telegram step stays due.
    expect((await r.channel("telegram_voice")).details?.relay.pending).toBe(0);

    await r.telegram!.restoreWan();
    await eventually(
      "the link back",
      () => r.channel("telegram_voice"),
      (state) => state.available
    );
    // Unacknowledged when the email's window ends, the alert is carried on Telegram: once, as a plain alert.
    n = await r.nextStep(id);
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "skipped"],
      ["email", "delivered"],
      ["telegram_voice", "delivered"]
    ]);
    const texts = textsTo(r, "Maria");
    expect(texts).toHaveLength(1);
    expect(texts[0].text).toMatch(/^🚨 CRITICAL · press-7\nOil temperature high$/);
    await r.expectNothingLost([id]);
    await r.expectEveryEventDeliveredOnce();
  });
});

const CUT_OFF_SENDS: Array<{name: string; reply: BotApiReply; error: RegExp}> = [
  {
    name: "a 500",
    reply: {error_code: 500, description: "Internal Server Error"},
    error: /^Telegram sendVoice: 500 Internal Server Error; kept to relay/
  },
  {name: "no answer (timeout)", reply: "hang", error: /^Telegram sendVoice: no answer within 2000 ms; kept to relay/}
];

describe.each(CUT_OFF_SENDS)("a Telegram send cut off by $name", ({reply, error}) => {
  it("fails the attempt, keeps the message, reaches email by the ack timeout, and relays the message once", async () => {
    const r = await onlineRig();
    const maria = await r.recipient("Maria", ["telegram_voice", "email"]);
    r.telegram!.script("sendVoice", reply);

    const id = await r.send(maria, "Oil temperature high");
    let n = await r.notification(id);
    expect(outcomes(n)).toEqual([["telegram_voice", "failed"]]);
    expect(n.attempts[0].error).toMatch(error);
    // The link came back at the next probe; /readyz keeps what went wrong.
    expect((await r.channel("telegram_voice")).details?.link.last_error).toBe(
      n.attempts[0].error.replace(/; kept to relay.*$/, "")
    );

    n = await r.nextStep(id);
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "failed"],
      ["email", "delivered"]
    ]);
    expect(mailedAlerts(r)).toEqual([id]);
    await expectRelayedOnce(r, "Maria", "Oil temperature high");
    await r.expectNothingLost([id]);
    await r.expectEveryEventDeliveredOnce();
  });
});

describe("Telegram refusing a send", () => {
  it("429 with a retry_after beyond max_retry_after_seconds: fails the attempt after no wait and reaches email by the ack timeout", async () => {
    const r = await onlineRig();
    const maria = await r.recipient("Maria", ["telegram_voice", "email"]);
    r.telegram!.script("sendVoice", {
      error_code: 429,
      description: "Too Many Requests: retry after 30",
      retry_after: 30
    });

    const id = await r.send(maria, "Oil temperature high");
    let n = await r.notification(id);
    expect(outcomes(n)).toEqual([["telegram_voice", "failed"]]);
    expect(n.attempts[0].error).toBe(
      "Telegram sendVoice: 429 Too Many Requests: retry after 30 (Telegram asked to wait 30 s)"
    );
    expect(r.telegram!.calls("sendVoice")).toHaveLength(1);

    n = await r.nextStep(id);
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "failed"],
      ["email", "delivered"]
    ]);
    // Flood control is Telegram answering: nothing is kept for a relay, so nothing arrives late.
    expect((await r.channel("telegram_voice")).details?.relay.pending).toBe(0);
    expect(textsTo(r, "Maria")).toEqual([]);
    await r.expectNothingLost([id]);
    await r.expectEveryEventDeliveredOnce();
  });

  it("403 (bot blocked): marks the contact unavailable, reaches email by the ack timeout, and the next high alert skips Telegram at once", async () => {
    const r = await onlineRig();
    const maria = await r.recipient("Maria", ["telegram_voice", "email"]);
    r.telegram!.block(r.contacts("Maria").telegram_id);

    const first = await r.send(maria, "Oil temperature high");
    let n = await r.notification(first);
    expect(outcomes(n)).toEqual([["telegram_voice", "failed"]]);
    expect(n.attempts[0].error).toBe("Telegram sendVoice: 403 Forbidden: bot was blocked by the user");
    n = await r.nextStep(first);
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "failed"],
      ["email", "delivered"]
    ]);

    // The bot and the link are fine: /readyz keeps Telegram available; the contact is what is gone.
    expect(await r.channel("telegram_voice")).toMatchObject({
      available: true,
      reason: null,
      details: {link: {state: "online"}}
    });
    const recipient = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    expect(recipient.channels.find((channel: {channel: string}) => channel.channel === "telegram_voice")).toMatchObject(
      {available: false, reason: expect.stringMatching(/bot was blocked/)}
    );

    // Closed first, so the next alert is paged on its own rather than joining this chain.
    expect((await r.gw.call("POST", `/api/v1/notifications/${first}/ack`, {body: {by: "Maria"}})).status).toBe(200);
    // A high alert skips the unusable contact at once (a critical one would try it again).
    const answer = await r.gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "Press 7 stopped", priority: "high", source: "press-7"}
    });
    const second = answer.body.notification_uuid;
    n = await r.notification(second);
    expect(outcomes(n)).toEqual([
      ["telegram_voice", "skipped"],
      ["email", "delivered"]
    ]);
    expect(n.attempts[0].error).toBe("contact marked unusable after a permanent failure (see the recipient)");
    expect(mailedAlerts(r)).toEqual([first, second]);
    expect(r.telegram!.calls("sendVoice")).toHaveLength(1);
    await r.expectNothingLost([first, second]);
    await r.expectEveryEventDeliveredOnce();
  });
});
