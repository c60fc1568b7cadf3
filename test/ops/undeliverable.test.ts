import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {NO_CHANNEL_WATCH, sendUndeliverable, setWaiting, SMTP_NOT_CONFIGURED} from "../support/undeliverable.js";
import {parseExposition} from "./exposition-parser.js";

// Undeliverable is loud: what a monitor reads (/readyz's status code, /metrics) and what the log says at start.
let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

const MODEM_NOT_READY = {
  channel: "sms" as const,
  reason: "the modem is not registered on the mobile network (searching)"
};

async function metrics(current: TestGateway) {
  const answer = await fetch(`${current.url}/metrics`);
  return parseExposition(await answer.text());
}

const warnings = (current: TestGateway) =>
  current.logLines
    .map((line) => JSON.parse(line) as {level: string; msg: string; missing?: string[]})
    .filter((record) => record.level === "warn" && record.msg.startsWith("no channel is configured"));

describe("undeliverable notifications", () => {
  it("turn /readyz 503 naming the count and the fix, and back to 200 once carried", async () => {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, NO_CHANNEL_WATCH);
    const recipient = await createRecipient(gw);
    const ready = await gw.call("GET", "/readyz", {key: null});
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({status: "ready", ready: true, undeliverable: {count: 0, reasons: []}});

    const first = await sendUndeliverable(gw, recipient);
    await sendUndeliverable(gw, recipient, [SMTP_NOT_CONFIGURED, MODEM_NOT_READY]);
    const unready = await gw.call("GET", "/readyz", {key: null});
    expect(unready.status).toBe(503);
    expect(unready.body).toMatchObject({status: "unready", ready: false, journal: {can_commit: true}});
    expect(unready.body.undeliverable).toEqual({
      count: 2,
      reasons: [
        {...SMTP_NOT_CONFIGURED, notifications: 2, reached: 2},
        {...MODEM_NOT_READY, notifications: 1, reached: 1}
      ]
    });

    // An acknowledged alert no longer waits; one carried at last neither.
    expect((await gw.call("POST", `/api/v1/notifications/${first}/ack`)).status).toBe(200);
    expect((await gw.call("GET", "/readyz", {key: null})).body.undeliverable.count).toBe(1);
    const [second] = (await gw.call("GET", "/api/v1/notifications?status=notifying")).body.items.map(
      (item: {id: string}) => item.id
    );
    await setWaiting(gw, second, null);
    expect((await gw.call("GET", "/readyz", {key: null})).status).toBe(200);
  });

  it("show on /metrics as a total and per channel", async () => {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, NO_CHANNEL_WATCH);
    const recipient = await createRecipient(gw);
    let parsed = await metrics(gw);
    expect(parsed.types.get("klaxon_notifications_undeliverable")).toBe("gauge");
    expect(parsed.value("klaxon_notifications_undeliverable")).toBe(0);
    expect(parsed.value("klaxon_notifications_undeliverable", {channel: "email"})).toBe(0);

    await sendUndeliverable(gw, recipient);
    await sendUndeliverable(gw, recipient, [SMTP_NOT_CONFIGURED, MODEM_NOT_READY]);
    parsed = await metrics(gw);
    expect(parsed.value("klaxon_notifications_undeliverable")).toBe(2);
    expect(parsed.value("klaxon_notifications_undeliverable", {channel: "email"})).toBe(2);
    expect(parsed.value("klaxon_notifications_undeliverable", {channel: "sms"})).toBe(1);
    expect(parsed.value("klaxon_notifications_undeliverable", {channel: "voice_call"})).toBe(0);
  });
});

describe("start-up", () => {
  it("does not warn when one channel is configured", async () => {
    gw = await startTestGateway({telegram: {bot_token: "1:x"}});
    expect(warnings(gw)).toEqual([]);
  });
});

// One gateway with no channel configured, shared: what these tests read (the start-up log, the API
// document, the one alert sent here) no other of them changes.
describe("a gateway with no channel configured", () => {
  let bare: TestGateway;
  beforeAll(async () => {
    bare = await startTestGateway();
  });
  afterAll(async () => {
    await bare.stop();
  });

  it("are real on a gateway with no channel configured: the alert has no channel in its plan and /readyz names each missing setting", async () => {
    const recipient = await createRecipient(bare, {channel_order: ["voice_call", "email"]});
    expect(
      (
        await bare.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: recipient, message: "press 4 stopped", priority: "high"}
        })
      ).status
    ).toBe(202);
    await bare.gateway.services.runner.idle();
    const unready = await bare.call("GET", "/readyz", {key: null});
    expect(unready.status).toBe(503);
    expect(unready.body.undeliverable).toEqual({
      count: 1,
      reasons: [
        {
          channel: null,
          reason: `no channel in the plan for priority high (left out: voice_call, no modem is configured (modem.port); email, ${SMTP_NOT_CONFIGURED.reason})`,
          notifications: 1,
          reached: 0
        }
      ]
    });
  });

  it("are described in the API document's /readyz answers", async () => {
    const document = (await bare.call("GET", "/api/v1/openapi.json", {key: null})).body;
    const responses = document.paths["/readyz"].get.responses;
    for (const status of ["200", "503"]) {
      const ref: string = responses[status].content["application/json"].schema.$ref;
      const model = document.components.schemas[ref.split("/").pop()!];
      expect(model.required).toContain("undeliverable");
      const undeliverable = document.components.schemas[model.properties.undeliverable.$ref.split("/").pop()!];
      expect(undeliverable.required).toEqual(["count", "reasons"]);
    }
  });

  it("warns that alerts cannot reach anyone when no channel is configured", () => {
    expect(warnings(bare)).toEqual([
      expect.objectContaining({
        msg: "no channel is configured: alerts are accepted but cannot reach anyone until smtp, modem or telegram is set up",
        missing: [
          "Telegram is not configured (telegram.bot_token)",
          "no modem is configured (modem.port)",
          "SMTP is not configured (smtp.host and smtp.from)"
        ]
      })
    ]);
  });
});
