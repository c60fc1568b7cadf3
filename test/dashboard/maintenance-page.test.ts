import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser, Page} from "playwright-core";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let anna: string;
let line: string;

const HOUR = 3_600_000;

/** "2026-11-27T08:00" as a datetime-local field reads it, on the browser's own wall clock. */
const localWall = (page: Page, ms: number) =>
  page.evaluate((instant) => {
    const date = new Date(instant);
    const two = (n: number) => String(n).padStart(2, "0");
    return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
  }, ms);

const windows = async (status: string) =>
  (await gw.call("GET", `/api/v1/maintenance?status=${status}`)).body.items as Array<Record<string, any>>;

beforeAll(async () => {
  gw = await startTestGateway();
  browser = await launchChromium();
  expect((await setAdminPassword(gw)).status).toBe(204);
  anna = await createRecipient(gw, {name: "Anna", email: "anna@plant.lan", phone: null});
  const bert = await createRecipient(gw, {name: "Bert", email: "bert@plant.lan", phone: null});
  const group = await gw.call("POST", "/api/v1/groups", {body: {name: "Line 3", members: [anna, bert]}});
  expect(group.status).toBe(201);
  line = group.body.uuid;
  const heartbeat = await gw.call("POST", "/api/v1/heartbeats", {
    body: {name: "line-3-plc", period_seconds: 60, target: line}
  });
  expect(heartbeat.status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

async function openMaintenance(page: Page) {
  await signInThroughPage(page, gw.url, "maintenance");
  await page.getByRole("heading", {name: "Active"}).waitFor();
}

describe("the Maintenance page", () => {
  it("starts a window from the form; an alert it holds is suppressed and found by that status", async () => {
    const {context, page, outside, scriptErrors} = await openContext(browser, DESKTOP);
    await openMaintenance(page);
    await page.locator("summary", {hasText: "Start maintenance"}).click();
    const form = page.locator("form.maintenance-form");
    await form.getByRole("button", {name: "Start maintenance"}).click();
    // Nothing named and no reason: the gateway's errors land under their fields.
    const reason = form.locator(".field", {has: page.getByLabel("Reason")});
    await reason.locator(".field-error").waitFor();

    await form.getByLabel("Reason").fill("Press 7 relined");
    await form.getByLabel("Anna", {exact: true}).check();
    await form.getByLabel("Hold alerts from sources").fill("plc-7, plc-8");
    await form.getByLabel("For", {exact: true}).selectOption({label: "4 hours"});
    const before = Date.now();
    await form.getByRole("button", {name: "Start maintenance"}).click();
    const card = page.locator("article.maintenance-active", {hasText: "Press 7 relined"});
    await card.waitFor();
    expect(await card.textContent()).toContain("Holds: Anna; sources plc-7, plc-8");
    // It says so, as other forms say "saved", and the form closes (issue 33).
    await page.getByRole("status").filter({hasText: "Maintenance “Press 7 relined” started, until"}).waitFor();
    expect(await page.locator("details.new-maintenance").getAttribute("open")).toBeNull();
    const [active] = await windows("active");
    expect(active).toMatchObject({reason: "Press 7 relined", targets: [anna], sources: ["plc-7", "plc-8"]});
    expect(Date.parse(active.ends_at) - before).toBeGreaterThanOrEqual(4 * HOUR - 1000);
    expect(Date.parse(active.ends_at) - Date.now()).toBeLessThanOrEqual(4 * HOUR);
    await shoot(page, "maintenance", "desktop");

    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: anna, priority: "high", message: "Press 7 pressure low", source: "plc-7"}
    });
    expect(sent.body.status).toBe("suppressed");
    const [window] = await windows("active");
    const long = await gw.call("GET", `/api/v1/notifications/${sent.body.notification_uuid}`);
    expect(long.body.maintenance_window).toEqual({
      uuid: window.uuid,
      reason: "Press 7 relined",
      starts_at: window.starts_at,
      ends_at: window.ends_at
    });
    await page.goto(`${gw.url}/dashboard/#/notifications?status=suppressed`);
    const held = page.locator("article.notification", {hasText: "Press 7 pressure low"});
    await held.waitFor();
    expect(await held.locator(".badge-suppressed").count()).toBe(1);
    // Its timeline names the window that holds it, not only "Accepted from plc-7".
    expect(await held.locator(".timeline-suppressed").textContent()).toMatch(
      /Held by the maintenance window “Press 7 relined” until .+: it pages nobody while the window lasts/
    );
    expect(await page.getByLabel("Status").inputValue()).toBe("suppressed");
    await shoot(page, "notifications-suppressed", "desktop");
    expect(outside).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("plans a window from a start and an end on the browser's clock, and deletes it before it begins", async () => {
    const {context, page, scriptErrors} = await openContext(browser, PHONE);
    page.on("dialog", (dialog) => void dialog.accept());
    await openMaintenance(page);
    await page.locator("summary", {hasText: "Start maintenance"}).click();
    const form = page.locator("form.maintenance-form");
    const starts = Math.ceil(Date.now() / HOUR) * HOUR + 24 * HOUR;
    await form.getByLabel("Reason").fill("Christmas shutdown");
    await form.getByLabel("Line 3 (group)", {exact: true}).check();
    await form.getByLabel("line-3-plc", {exact: true}).check();
    await form.getByLabel("From", {exact: true}).fill(await localWall(page, starts));
    await form.getByLabel("Or until").fill(await localWall(page, starts + 72 * HOUR));
    await form.getByRole("button", {name: "Start maintenance"}).click();
    const card = page.locator("article.maintenance-upcoming", {hasText: "Christmas shutdown"});
    await card.waitFor();
    expect(await windows("upcoming")).toMatchObject([
      {
        reason: "Christmas shutdown",
        starts_at: new Date(starts).toISOString(),
        ends_at: new Date(starts + 72 * HOUR).toISOString(),
        targets: [line],
        heartbeats: ["line-3-plc"]
      }
    ]);
    expect(await card.textContent()).toContain("Holds: Line 3 (group); heartbeats line-3-plc");
    await shoot(page, "maintenance", "phone");

    await card.getByRole("button", {name: "Delete"}).click();
    await expect.poll(async () => card.count()).toBe(0);
    expect(await windows("upcoming")).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("ends an active window now: it moves to the recently ended", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    page.on("dialog", (dialog) => void dialog.accept());
    await openMaintenance(page);
    const active = page.locator("article.maintenance-active", {hasText: "Press 7 relined"});
    await active.getByRole("button", {name: "End now"}).click();
    await page.locator("article.maintenance-ended", {hasText: "Press 7 relined"}).waitFor();
    expect(await page.locator("article.maintenance-active").count()).toBe(0);
    const [ended] = await windows("ended");
    expect(ended).toMatchObject({reason: "Press 7 relined", status: "ended"});
    expect(Date.parse(ended.ends_at)).toBeLessThanOrEqual(Date.now());
    expect(scriptErrors).toEqual([]);
    await context.close();
  });
});
