import {afterAll, beforeAll, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let rig: ModemGatewayRig;
let browser: Browser;

beforeAll(async () => {
  rig = await startModemGateway("sim7600", {call: {outcome: "answer", afterMs: 40, keys: ["1"]}});
  browser = await launchChromium();
  await rig.notification(await rig.send(await rig.recipient(["voice_call"], {name: "Maria Schmidt"})));
  // Jonas would be mailed too, but this box has no SMTP: the Status page says so.
  await rig.recipient(["voice_call", "email"], {name: "Jonas Weber"});
  expect((await setAdminPassword(rig.gw)).status).toBe(204);
});
afterAll(async () => {
  await browser?.close();
  await rig?.stop();
});

it.each([
  ["desktop", DESKTOP],
  ["phone", PHONE]
] as const)(
  "shows the modem's live state, the last call, the unconfigured channels and the contacts they leave out (%s)",
  async (size, viewport) => {
    const {context, page, scriptErrors} = await openContext(browser, viewport);
    await signInThroughPage(page, rig.gw.url, "status");
    const modem = page.locator("article", {has: page.getByRole("heading", {name: "Voice call", exact: true})});
    await modem.locator(".badge-available").waitFor();
    const text = await modem.textContent();
    for (const fact of ["port open", "sim", "registration", "operator", "signal", "last call", "answered"])
      expect(text, fact).toContain(fact);
    expect(await modem.getByRole("img", {name: /^Signal: \d of 4 bars$/}).count()).toBe(1);
    const email = page.locator("article", {has: page.getByRole("heading", {name: "Email", exact: true})});
    expect(await email.textContent()).toContain("SMTP is not configured");
    const plans = page.locator("article", {has: page.getByRole("heading", {name: "Plans", exact: true})});
    expect(await plans.textContent()).toContain(
      "1 recipient has email addresses but SMTP is not configured (smtp.host and smtp.from): those channels are left out of their plans"
    );
    expect(await page.locator("article", {hasText: "Disk space"}).textContent()).toMatch(/free of/);
    await shoot(page, "status", size);
    expect(scriptErrors).toEqual([]);
    await context.close();
  }
);

it("shows the SIM's fill level and a message on it that cannot be read, on the SMS card", async () => {
  const index = rig.simulator.sms.receive(
    {sender: "+4915112345678", text: "", rawPdu: "0004038121F3000099309251619580FF"},
    true
  );
  const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
  await signInThroughPage(page, rig.gw.url, "status");
  const sms = page.locator("article", {has: page.getByRole("heading", {name: "SMS", exact: true})});
  await sms.getByText("user data shorter than its length says").waitFor();
  const text = await sms.textContent();
  for (const fact of ["sim storage", "used: 1", "total: 30", "unreadable sms", `sim index: ${index}`, "form: pdu"])
    expect(text, fact).toContain(fact);
  expect(scriptErrors).toEqual([]);
  await context.close();
});
