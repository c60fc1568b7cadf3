import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {DESKTOP, launchChromium, openContext, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let alert: string;
const MARIA = {name: "Maria", password: "maria's long passphrase"};
const VICTOR = {name: "Victor", password: "victor's long passphrase"};

beforeAll(async () => {
  gw = await startTestGateway({dashboard: {sign_in_attempts_per_minute: 100}});
  browser = await launchChromium();
  expect((await setAdminPassword(gw)).status).toBe(204);
  const maria = await createRecipient(gw, {name: "Maria Schmidt"});
  alert = (
    await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message: "Line 3 hydraulics pressure low", priority: "high"}
    })
  ).body.notification_uuid;
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

describe("the Users page and roles in the browser", () => {
  it("lets an admin add an operator who is a recipient, and a viewer", async () => {
    const {context, page, outside, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "users");
    await page.getByRole("heading", {name: "Users", exact: true}).waitFor();
    const form = page.locator("form.new-user");
    for (const [who, role, recipient] of [
      [MARIA, "operator", "Maria Schmidt"],
      [VICTOR, "viewer", ""]
    ] as const) {
      await form.getByLabel("Name").fill(who.name);
      await form.getByLabel("Role").selectOption(role);
      await form.getByLabel("Is recipient").selectOption(recipient ? {label: recipient} : {value: ""});
      await form.getByLabel("Password").fill(who.password);
      await form.getByRole("button", {name: "Create user"}).click();
      await page.locator("article.user", {has: page.getByRole("heading", {name: who.name})}).waitFor();
    }
    const maria = page.locator("article.user", {has: page.getByRole("heading", {name: "Maria"})});
    expect(await maria.textContent()).toContain("Acknowledges as the recipient Maria Schmidt");
    const stored = (await gw.call("GET", "/api/v1/users")).body.items;
    expect(stored.map((user: {name: string; role: string}) => [user.name, user.role])).toEqual([
      ["admin", "admin"],
      ["Maria", "operator"],
      ["Victor", "viewer"]
    ]);
    await shoot(page, "users", "desktop");
    expect(outside).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("shows a viewer no changes, and answers one tried anyway with a 403 in words", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "notifications", VICTOR);
    const card = page.locator("article.notification", {hasText: "Line 3 hydraulics pressure low"});
    await card.waitFor();
    expect(await page.locator("#signed-in-as").textContent()).toBe("Victor (viewer)");
    expect(await card.getByRole("button", {name: "Acknowledge"}).isVisible()).toBe(false);
    for (const link of ["Users", "API keys", "Outbound webhooks"])
      expect(await page.getByRole("link", {name: link}).isVisible(), link).toBe(false);
    expect(await page.getByRole("link", {name: "Audit log"}).isVisible()).toBe(true);

    await page.goto(`${gw.url}/dashboard/#/users`);
    const problem = page.locator(".form-problem");
    await problem.waitFor();
    expect(await problem.textContent()).toBe(
      "This page could not be loaded" +
        "Victor is signed in as viewer, which may only read: ask an admin to do this or to change your role"
    );
    // The same words for a change the page did not offer, sent from the page's own script.
    const refused = await page.evaluate(async (id) => {
      const session: any = await (await fetch("/dashboard/api/session")).json();
      const answer = await fetch(`/dashboard/api/notifications/${id}/ack`, {
        method: "POST",
        headers: {"Content-Type": "application/json", "X-CSRF-Token": session.csrf_token},
        body: "{}"
      });
      return {status: answer.status, body: (await answer.json()) as any};
    }, alert);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("Victor is signed in as viewer, which may only read");
    expect((await gw.call("GET", `/api/v1/notifications/${alert}`)).body.status).not.toBe("acknowledged");
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("records an operator's acknowledgement as the recipient they are", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "notifications", MARIA);
    const card = page.locator("article.notification", {hasText: "Line 3 hydraulics pressure low"});
    await card.getByRole("button", {name: "Acknowledge"}).click();
    await expect.poll(() => card.locator(".badge").nth(1).textContent()).toBe("acknowledged");
    await card.locator("summary", {hasText: "Timeline"}).click();
    expect(await card.locator(".timeline").textContent()).toContain("Acknowledged by Maria Schmidt via dashboard");
    // An operator sees no Users page link and no setup forms.
    expect(await page.getByRole("link", {name: "Users"}).isVisible()).toBe(false);
    await page.goto(`${gw.url}/dashboard/#/recipients`);
    await page.getByRole("heading", {name: "Recipients and groups"}).waitFor();
    expect(await page.getByRole("button", {name: "New recipient"}).isVisible()).toBe(false);
    expect(await page.getByRole("button", {name: "Send test"}).first().isVisible()).toBe(true);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });
});
