import {afterAll, beforeAll, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  logDrivers,
  startTestGateway,
  type TestGateway
} from "../support/gateway.js";
import {RecordingDriver} from "../support/recording-driver.js";
import {NO_CHANNEL_WATCH, sendUndeliverable, setWaiting, SMTP_NOT_CONFIGURED} from "../support/undeliverable.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let waiting: string;

beforeAll(async () => {
  // Maria's mailbox refuses for good (SMTP 550): her address is marked unusable.
  const email = new RecordingDriver("email", 1, {
    kind: "fail",
    message: "550 5.1.1 mailbox unavailable",
    permanent: true
  });
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {
    drivers: (logger) => [...logDrivers(logger).filter((driver) => driver.channel !== "email"), email],
    ...NO_CHANNEL_WATCH
  });
  const maria = await createRecipient(gw, {
    name: "Maria Schmidt",
    phone: null,
    email: "maria@factory.lan",
    channel_order: ["email"]
  });
  const refused = (
    await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "press 2 stopped", priority: "high"}
    })
  ).body.notification_uuid;
  await gw.gateway.services.runner.idle();
  expect((await gw.call("POST", `/api/v1/notifications/${refused}/resolve`)).status).toBe(200);
  waiting = await sendUndeliverable(
    gw,
    await createRecipient(gw, {name: "Frank Weber", channel_order: ["voice_call"]})
  );
  expect((await setAdminPassword(gw)).status).toBe(204);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

// Frank was called before his alert was made to wait: the banner names what waits, not "cannot reach anyone".
const BANNER = `1 alert waits for its email step: ${SMTP_NOT_CONFIGURED.reason}`;

it.each([
  ["desktop", DESKTOP],
  ["phone", PHONE]
] as const)(
  "shows a red banner on every page while an alert waits for a channel, and the unusable contact (%s)",
  async (size, viewport) => {
    const {context, page, scriptErrors} = await openContext(browser, viewport);
    await signInThroughPage(page, gw.url, "notifications");
    const banner = page.getByRole("alert").filter({hasText: SMTP_NOT_CONFIGURED.reason});
    await expect.poll(() => banner.textContent()).toBe(`${BANNER} Gateway status`);
    for (const route of ["recipients", "keys", "audit"]) {
      await page.goto(`${gw.url}/dashboard/#/${route}`);
      await page.locator("h1").first().waitFor();
      expect(await banner.isVisible(), route).toBe(true);
    }

    // The recipient card names the refused address, masked, and why.
    await page.goto(`${gw.url}/dashboard/#/recipients`);
    const card = page.locator("article", {has: page.getByRole("heading", {name: "Maria Schmidt"})});
    await expect.poll(() => card.textContent()).toContain("Unusable contacts");
    expect(await card.textContent()).toContain("Email m****@factory.lan: 550 5.1.1 mailbox unavailable");

    // The banner links to the Status page, which lists the reasons and the unusable contacts.
    await banner.getByRole("link", {name: "Gateway status"}).click();
    const stuck = page.locator("article", {has: page.getByRole("heading", {name: "Alerts reaching people"})});
    await expect.poll(() => stuck.textContent()).toContain(`Email: ${SMTP_NOT_CONFIGURED.reason} (1 waiting)`);
    const unusable = page.locator("article", {has: page.getByRole("heading", {name: "Maria Schmidt"})});
    expect(await unusable.textContent()).toContain("m****@factory.lan");
    expect(await unusable.textContent()).toContain("550 5.1.1 mailbox unavailable");
    // The journal commits: its badge stays "ready" though /readyz answers 503.
    expect(
      await page
        .locator("article", {has: page.getByRole("heading", {name: "Journal"})})
        .locator(".badge-ready")
        .count()
    ).toBe(1);
    await shoot(page, "status-undeliverable", size);
    expect(scriptErrors).toEqual([]);
    await context.close();
  }
);

it("hides the banner once no alert waits", async () => {
  const {context, page} = await openContext(browser);
  await signInThroughPage(page, gw.url, "notifications");
  const banner = page.getByRole("alert").filter({hasText: SMTP_NOT_CONFIGURED.reason});
  await banner.waitFor();
  await setWaiting(gw, waiting, null);
  await page.goto(`${gw.url}/dashboard/#/recipients`);
  await expect.poll(() => page.locator("#undeliverable").isHidden()).toBe(true);
  await context.close();
});
