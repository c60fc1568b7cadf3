import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser, Page} from "playwright-core";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {startWebhookReceiver, type WebhookReceiver} from "../support/webhook-receiver.js";
import {systemClock} from "../../src/lib/clock.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword, signIn} from "./support/dashboard-client.js";

let gw: TestGateway;
let browser: Browser;
let receiver: WebhookReceiver;

/** A small factory's setup, made through the API: people, a group, keys, a webhook and alerts in every state. */
async function seed() {
  const maria = await createRecipient(gw, {
    name: "Maria Schmidt",
    phone: "+4915123456789",
    email: "maria@factory.lan",
    telegram_id: "48213377",
    escalation: {ack_timeout_seconds: 90, repeat: 2},
    quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin", allow_priorities: ["critical"]}
  });
  const jonas = await createRecipient(gw, {
    name: "Jonas Weber",
    phone: "+4917612345678",
    email: null,
    channel_order: ["voice_call", "sms"]
  });
  await createRecipient(gw, {
    name: "Maintenance desk",
    email: "maintenance@factory.lan",
    phone: null,
    routing_rules: [{priorities: ["low", "info"], channels: ["email"]}]
  });
  const group = await gw.call("POST", "/api/v1/groups", {
    body: {name: "Press line 7", members: [maria, jonas], strategy: "sequential"}
  });
  const plc = await gw.call("POST", "/api/v1/keys", {body: {name: "plc-gateway", scopes: ["notifications:send"]}});
  const grafana = await gw.call("POST", "/api/v1/keys", {
    body: {name: "grafana", scopes: ["notifications:send", "notifications:read"]}
  });
  await gw.call("GET", "/api/v1/notifications", {key: grafana.body.key});
  const old = await gw.call("POST", "/api/v1/keys", {body: {name: "old-scada", scopes: ["notifications:send"]}});
  await gw.call("DELETE", `/api/v1/keys/${old.body.id}`);
  await gw.call("POST", "/api/v1/webhooks", {body: {url: receiver.url, events: ["*"]}});
  const press = await gw.call("POST", "/api/v1/heartbeats", {
    body: {name: "press-7-plc", period_seconds: 60, grace_seconds: 30, target: group.body.uuid}
  });
  await fetch(press.body.ping_url, {method: "POST"});
  await gw.call("POST", "/api/v1/heartbeats", {
    body: {name: "nightly-backup", period_seconds: 86400, grace_seconds: 3600, target: jonas, priority: "low"}
  });
  await gw.call("POST", "/api/v1/integrations", {
    body: {name: "prometheus", kind: "alertmanager", target: group.body.uuid}
  });
  const alerts: Array<[string, string, string, string]> = [
    [maria, "critical", "Press 7 hydraulic oil over 80 °C", "plc-7"],
    [group.body.uuid, "high", "Line 7 conveyor stopped: light curtain tripped", "plc-7"],
    [jonas, "medium", "Compressor 2 pressure low (5.1 bar)", "scada"],
    [maria, "high", "Cold store door open for 10 minutes", "iot-gateway"],
    [jonas, "low", "Backup of the MES database took 3 h", "cron"]
  ];
  const ids: string[] = [];
  for (const [target, priority, message, source] of alerts) {
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      key: plc.body.key,
      body: {recipient_uuid: target, priority, message, source, link: "http://scada.factory.lan/alarms"}
    });
    ids.push(sent.body.notification_uuid);
  }
  await gw.gateway.services.runner.idle();
  const dashboard = await signIn(gw);
  await dashboard.call("POST", `/dashboard/api/notifications/${ids[3]}/ack`, {
    body: {by: "Maria", note: "Closed it, checking the temperature log"}
  });
  await gw.call("POST", `/api/v1/notifications/${ids[4]}/resolve`);
  await dashboard.call("POST", "/dashboard/api/sign-out");
}

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  receiver = await startWebhookReceiver(systemClock);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await gw?.stop();
});

async function visit(page: Page, route: string, ready: string) {
  await page.goto(`${gw.url}/dashboard/#/${route}`);
  await page.locator(ready).first().waitFor();
}

describe("every page, on a desktop and on a phone", () => {
  it("first visit: make the first admin", async () => {
    for (const [size, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE]
    ] as const) {
      const {context, page} = await openContext(browser, viewport);
      await visit(page, "", "text=Make the first admin");
      await shoot(page, "set-password", size);
      await context.close();
    }
    expect((await setAdminPassword(gw)).status).toBe(204);
    await seed();
  });

  for (const [size, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE]
  ] as const) {
    it(`every page at ${size} size`, async () => {
      const {context, page, outside, scriptErrors} = await openContext(browser, viewport);
      await visit(page, "notifications", "text=Sign in to Klaxon");
      await shoot(page, "sign-in", size);
      await signInThroughPage(page, gw.url, "notifications");

      await page.locator(".live-indicator[data-state=live]").waitFor();
      await page.locator("article.notification").nth(4).waitFor();
      await page.locator("article.notification", {hasText: "Cold store"}).locator("summary").click();
      // "Cold store" joined Press 7's paging (a storm to Maria) and names it: pick Press 7's own card.
      await page
        .locator("article.notification", {hasText: "Press 7", hasNotText: "Joined the paging"})
        .locator("summary")
        .click();
      await shoot(page, "notifications", size);

      await visit(page, "recipients", "article.item");
      await shoot(page, "recipients", size);
      await page.getByRole("button", {name: "New recipient"}).click();
      await page.getByLabel("Phone").fill("0151-2345");
      await page.getByRole("button", {name: "Create recipient"}).click();
      await page.locator(".field-error").first().waitFor();
      await shoot(page, "recipient-form", size);

      await visit(page, "keys", "tbody tr");
      await page.getByLabel("Name").fill("line-3-scada");
      await page.getByRole("button", {name: "Create key"}).click();
      await page.locator("[data-secret]").waitFor();
      await shoot(page, "api-keys", size);

      await visit(page, "webhooks", "article.item");
      await page.locator("summary", {hasText: "Delivery log"}).click();
      await page.locator("tbody tr").first().waitFor();
      await shoot(page, "webhooks", size);

      await visit(page, "integrations", "article.heartbeat");
      await shoot(page, "integrations", size);

      await visit(page, "audit", "tbody tr");
      await shoot(page, "audit-log", size);

      await visit(page, "users", "article.user");
      await shoot(page, "users", size);

      expect(outside).toEqual([]);
      expect(scriptErrors).toEqual([]);
      await context.close();
    });
  }
});
