import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Page} from "playwright-core";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {browserOn} from "./support/browser.js";
import {ADMIN_NAME, ADMIN_PASSWORD} from "./support/dashboard-client.js";

// The callbacks given to page.evaluate run in the browser; the project compiles without DOM types.
declare const document: any;
declare const window: any;

// One browser session walks the setup flow of the spec in order: each test builds on the last.
let gw: TestGateway;
let session: Awaited<ReturnType<typeof browserOn>>;
let page: Page;
let recipientUuid: string;

// Time stands still, so the sign-in budget below is exact: 5 attempts a minute, none refilled.
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  gw = await startTestGateway({...ALL_CHANNELS_CONFIGURED, dashboard: {sign_in_attempts_per_minute: 5}}, {clock});
  session = await browserOn(gw);
  page = session.page;
});
afterAll(() => session?.close());

const go = (route: string) => session.go(route);

describe("the dashboard in a real browser", () => {
  it("asks for the first admin's name and password on first visit, and only with an admin key", async () => {
    await page.goto(`${gw.url}/`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/");
    await expect.poll(() => page.locator("h1").textContent()).toBe("Make the first admin");
    await page.getByLabel("Admin API key").fill("klx_aaaaaaaa_" + "b".repeat(43));
    await page.getByLabel("Name").fill(ADMIN_NAME);
    await page.getByLabel("New password").fill(ADMIN_PASSWORD);
    await page.getByLabel("Repeat the password").fill(ADMIN_PASSWORD);
    await page.getByRole("button", {name: "Set password and sign in"}).click();
    await expect.poll(() => page.locator(".field-error").textContent()).toBe("not an active admin API key");
    expect(await page.getByLabel("Admin API key").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Admin API key").fill(gw.adminKey);
    await page.getByLabel("Repeat the password").fill("something else");
    await page.getByRole("button", {name: "Set password and sign in"}).click();
    await expect.poll(() => page.locator(".field-error").textContent()).toBe("type the same password twice");

    await page.getByLabel("Repeat the password").fill(ADMIN_PASSWORD);
    await page.getByRole("button", {name: "Set password and sign in"}).click();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Notifications");
    // Focus moves to the new page's heading once it has rendered; poll, the heading text may come first.
    await expect
      .poll(() => page.locator("#page-title").evaluate((heading) => heading === document.activeElement))
      .toBe(true);
  });

  it("keeps the session cookie away from scripts", async () => {
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([expect.objectContaining({name: "klaxon_session", httpOnly: true, sameSite: "Strict"})]);
    expect(await page.evaluate(() => document.cookie)).toBe("");
  });

  it("on an empty box, says how to send the first alert and that a heartbeat needs someone to page", async () => {
    await go("notifications");
    const hint = page.locator(".first-alert");
    await hint.waitFor();
    expect(await hint.textContent()).toContain("No notifications yet. To send your first alert:");
    expect(await hint.locator("a", {hasText: "Recipients"}).getAttribute("href")).toBe("#/recipients");
    await go("integrations");
    await page.locator(".notice", {hasText: "Nobody to page yet: add a recipient"}).waitFor();
  });

  it("creates a recipient through the form, explaining bad input first", async () => {
    await go("recipients");
    await page.getByRole("button", {name: "New recipient"}).click();
    await page.getByLabel("Name", {exact: true}).fill("Maria Schmidt");
    await page.getByLabel("Phone").fill("0151 2345");
    await page.getByLabel("Seconds to wait for an acknowledgement").fill("5");
    await page.getByRole("button", {name: "Create recipient"}).click();
    const phoneError = page.locator(".field", {has: page.getByLabel("Phone")}).locator(".field-error");
    // The gateway's own words (the schema checks the leading +, so this comes with the other fields' errors).
    await expect
      .poll(() => phoneError.textContent())
      .toBe(
        "must be international: a + and the country calling code (e.g. +49 151 12345678); 00 and national numbers are not accepted"
      );
    const timeoutError = page
      .locator(".field", {has: page.getByLabel("Seconds to wait for an acknowledgement")})
      .locator(".field-error");
    expect(await timeoutError.textContent()).toContain("must be >= 15");
    expect(await page.locator(".form-problem").textContent()).toContain("Correct the fields marked below");
    await expect.poll(() => page.getByLabel("Phone").evaluate((input) => input === document.activeElement)).toBe(true);
    expect((await gw.call("GET", "/api/v1/recipients")).body.items).toEqual([]);

    await page.getByLabel("Phone").fill("+4915123456789");
    await page.getByLabel("Seconds to wait for an acknowledgement").fill("60");
    await page.getByLabel("Email address").fill("maria@factory.lan");
    // Email first, then the voice call: the order buttons work from the keyboard.
    await page.getByRole("button", {name: "Move Email up"}).click();
    await page.getByRole("button", {name: "Move Email up"}).press("Enter");
    await page.getByLabel("Hold alerts during quiet hours").check();
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    await page.getByRole("button", {name: "Create recipient"}).click();
    await expect.poll(() => page.locator(".page-message").textContent()).toBe("Recipient “Maria Schmidt” saved.");

    const [stored] = (await gw.call("GET", "/api/v1/recipients")).body.items;
    expect(stored).toMatchObject({
      name: "Maria Schmidt",
      phone: "+4915123456789",
      email: "maria@factory.lan",
      // No Telegram chat id: the form checked only the channels she has a contact for (issue 33).
      channel_order: ["email", "voice_call"],
      escalation: {ack_timeout_seconds: 60, repeat: 1},
      quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin", allow_priorities: ["critical"]}
    });
    recipientUuid = stored.uuid;
    expect(await page.locator("article", {hasText: "Maria Schmidt"}).locator("code").first().textContent()).toBe(
      recipientUuid
    );
  });

  it("shows an alert sent through the API without a reload, and acknowledges it from the page", async () => {
    await go("notifications");
    await expect.poll(() => page.locator(".live-indicator").textContent()).toBe("Live");
    await page.evaluate(() => (window.sameDocument = true));
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {
        recipient_uuid: recipientUuid,
        message: "Press 7 hydraulic oil over 80 °C",
        priority: "critical",
        source: "plc-7"
      }
    });
    expect(sent.status).toBe(202);
    const card = page.locator("article.notification", {hasText: "Press 7 hydraulic oil over 80 °C"});
    await card.waitFor();
    // The runner's first attempt arrives over the same stream.
    await expect.poll(() => card.locator("summary").textContent()).toMatch(/Timeline \([1-9]\d* attempts?\)/);
    expect(await page.evaluate(() => window.sameDocument)).toBe(true);
    expect(await card.textContent()).toContain("Maria Schmidt");

    await card.getByRole("button", {name: "Acknowledge"}).click();
    await expect.poll(() => card.locator(".badge-acknowledged").count()).toBe(1);
    expect(await card.getByRole("button", {name: "Acknowledge"}).count()).toBe(0);
    await card.locator("summary").click();
    expect(await card.locator(".timeline").textContent()).toContain("Acknowledged by admin via dashboard");
    // The admin sees whom each attempt went to by name, with the contact in full (the API masks it).
    expect(await card.locator(".timeline").textContent()).toContain("Email to Maria Schmidt (maria@factory.lan)");
    const stored = await gw.call("GET", `/api/v1/notifications/${sent.body.notification_uuid}`);
    expect(stored.body).toMatchObject({status: "acknowledged", acknowledged_via: "dashboard"});
  });

  it("filters notifications by status", async () => {
    await page.getByLabel("Status").selectOption("notifying");
    await expect.poll(() => page.locator(".empty").textContent()).toBe("No notifications match these filters.");
    expect(page.url()).toContain("#/notifications?status=notifying");
    await page.getByLabel("Status").selectOption("acknowledged");
    await page.locator("article.notification").first().waitFor();
  });

  it("says whose paging a storm's newcomer joined and by when it is paged", async () => {
    await go("notifications");
    const send = async (message: string) =>
      (
        await gw.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: recipientUuid, message, priority: "high"}
        })
      ).body.notification_uuid as string;
    const first = await send("Press 7 oil temperature high");
    await expect
      .poll(async () => (await gw.call("GET", `/api/v1/notifications/${first}`)).body.attempts.length)
      .toBeGreaterThan(0);
    const second = await send("Press 9 light curtain fault");
    const card = page.locator("article.notification", {hasText: "Press 9 light curtain fault"});
    await expect
      .poll(() => card.locator(".storm-wait").textContent())
      .toMatch(
        /^Joined the paging of Press 7 oil temperature high \(a storm to the same person\): paged with it by \S/
      );
    for (const id of [first, second]) await gw.call("POST", `/api/v1/notifications/${id}/resolve`, {body: {}});
  });

  it("shows the acknowledgement in the audit log, filtered by action", async () => {
    await go("audit");
    await page.getByLabel("Action").fill("notification.acknowledged");
    await page.getByRole("button", {name: "Filter"}).click();
    const rows = page.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/dashboard admin.*notification\.acknowledged.*"via":"dashboard"/);
  });

  it("creates an API key with scopes and shows it exactly once", async () => {
    await go("keys");
    await page.getByLabel("Name").fill("plc-gateway");
    await page.getByRole("button", {name: "Create key"}).click();
    const secret = page.locator("[data-secret]");
    await secret.waitFor();
    const key = (await secret.textContent()) as string;
    expect(key).toMatch(/^klx_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect((await gw.call("GET", "/api/v1/recipients", {key})).status).toBe(403);
    await expect
      .poll(() => page.locator("tbody tr", {hasText: "plc-gateway"}).textContent())
      .toContain("notifications:send");
    await page.reload();
    await page.locator("tbody tr", {hasText: "plc-gateway"}).waitFor();
    expect(await page.content()).not.toContain(key.slice(13));
  });

  it("refuses a state change that lacks the CSRF token, even from the signed-in browser", async () => {
    const answer = await page.evaluate(async () => {
      const response = await fetch("/api/v1/recipients", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({name: "Mallory", email: "m@example.com"})
      });
      return {status: response.status, body: await response.json()};
    });
    expect(answer).toMatchObject({status: 403, body: {code: "csrf_token_invalid"}});
    expect((await gw.call("GET", "/api/v1/recipients")).body.items).toHaveLength(1);
  });

  it("names outbound webhooks and inbound integrations apart, links the API docs, and tells an empty filter from an empty box", async () => {
    const links = await page.locator("#nav a").allTextContents();
    expect(links).toEqual(expect.arrayContaining(["Integrations and heartbeats", "Outbound webhooks", "API docs"]));
    expect(await page.locator("#nav a", {hasText: "API docs"}).getAttribute("href")).toBe("/docs");
    await go("notifications");
    await page.getByLabel("Status").selectOption("suppressed");
    await page.locator(".empty", {hasText: "No notifications match these filters."}).waitFor();
  });

  it("shows the gateway status with disk space and each channel", async () => {
    await go("status");
    await page.getByRole("heading", {name: "Disk space"}).waitFor();
    expect(await page.locator("article", {hasText: "Disk space"}).textContent()).toMatch(/free of/);
    for (const channel of ["Telegram voice", "Voice call", "SMS", "Email"])
      expect(await page.getByRole("heading", {name: channel, exact: true}).count()).toBe(1);
  });

  it("adds a heartbeat through the form and shows its keyless ping URL", async () => {
    await go("integrations");
    await page.getByLabel("Name").first().fill("Press 7 PLC");
    await page.getByRole("button", {name: "Add heartbeat"}).click();
    await page.locator(".field-error").first().waitFor();
    await page.getByLabel("Name").first().fill("press-7-plc");
    await page.getByRole("button", {name: "Add heartbeat"}).click();
    const card = page.locator("article.heartbeat", {hasText: "press-7-plc"});
    await card.waitFor();
    const pingUrl = (await card.locator("code").textContent()) as string;
    expect(pingUrl).toMatch(new RegExp(`^${gw.url}/ping/`));
    expect((await fetch(pingUrl, {method: "POST"})).status).toBe(200);
    await page.reload();
    await expect
      .poll(() => page.locator("article.heartbeat", {hasText: "press-7-plc"}).locator(".badge").textContent())
      .toBe("up");

    page.once("dialog", (dialog) => void dialog.accept());
    await page
      .locator("article.heartbeat", {hasText: "press-7-plc"})
      .getByRole("button", {name: "New ping URL"})
      .click();
    await page.getByText("Heartbeat press-7-plc has a new ping URL.").first().waitFor();
    const newUrl = (await page
      .locator("article.heartbeat", {hasText: "press-7-plc"})
      .locator("code")
      .textContent()) as string;
    expect(newUrl).not.toBe(pingUrl);
    expect((await fetch(pingUrl, {method: "POST"})).status).toBe(404);
    expect((await fetch(newUrl, {method: "POST"})).status).toBe(200);
  });

  it("signs out, after which pages show the sign-in form and the API refuses the browser", async () => {
    await page.getByRole("button", {name: "Sign out"}).click();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Sign in to Klaxon");
    await go("recipients");
    expect(await page.locator("h1").textContent()).toBe("Sign in to Klaxon");
    expect(await page.locator("body").textContent()).not.toContain("Maria Schmidt");
    const status = await page.evaluate(async () => (await fetch("/api/v1/recipients")).status);
    expect(status).toBe(401);
  });

  it("rate-limits wrong passwords", async () => {
    // Three of the five attempts went on setting the password (one with a wrong key) and signing in.
    const messages: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.getByLabel("Name").fill(ADMIN_NAME);
      await page.getByLabel("Password", {exact: true}).fill(`wrong guess ${attempt}`);
      await page.getByRole("button", {name: "Sign in"}).click();
      await page.locator(".form-problem").waitFor();
      messages.push((await page.locator(".form-problem").textContent()) as string);
    }
    expect(messages[0]).toContain("Authentication required");
    expect(messages[1]).toContain("Authentication required");
    expect(messages[2]).toContain("Too many requests");
    expect(messages[2]).toContain("too many sign-in attempts from this address");
  });

  it("loaded nothing from outside the box and threw no script errors", () => {
    expect(session.outside).toEqual([]);
    expect(session.scriptErrors).toEqual([]);
  });
});
