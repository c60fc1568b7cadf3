import {afterEach, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {emailRig, stopEmailRigs} from "../channels/email-rig.js";
import {DESKTOP, launchChromium, openContext, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
stopEmailRigs();
let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

it("sends a test page from the recipient's card, shows the outcome and marks the address verified", async () => {
  const rig = await emailRig();
  await rig.recipient({name: "Maria Schmidt", phone: "+4915112345678"});
  expect((await setAdminPassword(rig.gw)).status).toBe(204);
  browser = await launchChromium();
  const {page, scriptErrors} = await openContext(browser, DESKTOP);
  await signInThroughPage(page, rig.gw.url, "recipients");

  const card = page.locator("article", {has: page.getByRole("heading", {name: "Maria Schmidt"})});
  const contact = (channel: string) => card.locator(`li[data-channel="${channel}"]`);
  await expect.poll(() => contact("email").textContent()).toContain("never verified");
  expect(await contact("sms").textContent()).toContain("never verified");

  await card.getByRole("button", {name: "Test Email for Maria Schmidt"}).click();

  const outcome = card.locator(".test-outcome");
  await expect.poll(() => outcome.textContent()).toContain("Email m****@factory.lan: delivered");
  expect(await outcome.textContent()).toContain("accepted by the SMTP server");
  expect(await contact("email").textContent()).toContain("verified");
  expect(await contact("email").textContent()).not.toContain("never verified");
  expect(await contact("sms").textContent()).toContain("never verified");
  const mail = await rig.peer.next();
  expect(mail.text).toContain("[TEST] Klaxon test page for Maria Schmidt: no action needed");
  await shoot(page, "recipients-test-page", "desktop");

  // The marker is the gateway's, not only the page's: a reload still shows the address verified.
  await page.reload();
  await expect.poll(() => contact("email").textContent()).toMatch(/^Email: verified/);
  expect(scriptErrors).toEqual([]);
});
