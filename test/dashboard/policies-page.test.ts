import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";
import {DESKTOP, launchChromium, openContext, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let plant: Awaited<ReturnType<typeof createPlant>>;

beforeAll(async () => {
  // Channels configured (log drivers): an alert to the policy below pages someone.
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  browser = await launchChromium();
  expect((await setAdminPassword(gw)).status).toBe(204);
  plant = await createPlant(gw);
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

describe("the Escalation policies page", () => {
  it("creates a policy from targets chosen by name, schedules included, and shows who each level would page now", async () => {
    const {context, page, outside, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "policies");
    await page.getByRole("heading", {name: "Escalation policies"}).waitFor();
    await page.locator("summary", {hasText: "New escalation policy"}).click();
    const form = page.locator("form.editor");
    await form.getByLabel("Name", {exact: true}).fill("Line 3 hydraulics");

    // A level with no target is refused beside the level, and nothing is created.
    await form.getByRole("button", {name: "Create policy"}).click();
    await form.locator(".form-problem").waitFor();
    const level1 = form.locator("fieldset.level").nth(0);
    expect(await level1.locator(".field-error").count()).toBe(1);
    expect(await gw.call("GET", "/api/v1/escalation-policies").then((answer) => answer.body.items)).toEqual([]);

    await level1.getByLabel("Line 3 (schedule)").check();
    await level1.getByLabel("Minutes before the next level").fill("10");
    await form.getByRole("button", {name: "Add level"}).click();
    const level2 = form.locator("fieldset.level").nth(1);
    await level2.getByLabel("Bert", {exact: true}).check();
    await level2.getByLabel("Crew D (group)").check();
    await form.getByRole("button", {name: "Create policy"}).click();

    const card = page.locator("article.policy", {has: page.getByRole("heading", {name: "Line 3 hydraulics"})});
    await card.waitFor();
    const onCall = (await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/on-call`)).body.recipients
      .map((person: {name: string}) => person.name)
      .join(", ");
    const levels = card.locator("ol.levels > li");
    expect(await levels.nth(0).textContent()).toBe(
      `Level 1: Line 3 (schedule) · would page now: ${onCall} · next level after 10 min`
    );
    expect(await levels.nth(1).textContent()).toBe("Level 2: Bert, Crew D (group) · would page now: Bert, Dora, Anna");

    const stored = await gw.call("GET", "/api/v1/escalation-policies");
    expect(stored.body.items).toHaveLength(1);
    expect(stored.body.items[0].levels).toEqual([
      {targets: [plant.schedule.uuid], escalate_after_minutes: 10},
      {targets: [plant.bert, plant.crewD], escalate_after_minutes: null}
    ]);
    await shoot(page, "policies", "desktop");
    expect(outside).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("edits a policy's levels as a list, and an alert to it shows the level it is on", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "policies");
    const card = page.locator("article.policy", {has: page.getByRole("heading", {name: "Line 3 hydraulics"})});
    await card.locator("summary", {hasText: "Edit Line 3 hydraulics"}).click();
    const form = card.locator("form.editor");
    // Level 2 pages Cem instead of Bert and the crew; a third level (Anna) comes 5 minutes after it.
    const level2 = form.locator("fieldset.level").nth(1);
    await level2.getByLabel("Bert", {exact: true}).uncheck();
    await level2.getByLabel("Crew D (group)").uncheck();
    await level2.getByLabel("Cem", {exact: true}).check();
    await level2.getByLabel("Minutes before the next level").fill("5");
    await form.getByRole("button", {name: "Add level"}).click();
    await form.locator("fieldset.level").nth(2).getByLabel("Anna", {exact: true}).check();
    await form.getByRole("button", {name: "Save policy"}).click();

    const levels = page.locator("article.policy ol.levels > li");
    await expect.poll(() => levels.count()).toBe(3);
    expect(await levels.nth(1).textContent()).toBe("Level 2: Cem · would page now: Cem · next level after 5 min");
    expect(await levels.nth(2).textContent()).toBe("Level 3: Anna · would page now: Anna");
    const policy = (await gw.call("GET", "/api/v1/escalation-policies")).body.items[0];
    expect(policy.levels).toEqual([
      {targets: [plant.schedule.uuid], escalate_after_minutes: 10},
      {targets: [plant.cem], escalate_after_minutes: 5},
      {targets: [plant.anna], escalate_after_minutes: null}
    ]);

    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: policy.uuid, message: "Line 3 hydraulics pressure low", priority: "high"}
    });
    expect(sent.status).toBe(202);
    await page.goto(`${gw.url}/dashboard/#/notifications`);
    const alert = page.locator("article.notification", {hasText: "Line 3 hydraulics pressure low"});
    await expect
      .poll(() => alert.locator(".policy-level").textContent())
      .toMatch(/^Escalation policy Line 3 hydraulics: on level 1 of 3 · next level /);
    // Whoever the schedule had on call when the level started (a person, or crew D), named, with whom it paged.
    const names: Record<string, string> = {[plant.anna]: "Anna", [plant.bert]: "Bert", [plant.cem]: "Cem"};
    Object.assign(names, {[plant.dora]: "Dora", [plant.crewD]: "Crew D (group)"});
    const expected = async () => {
      const level = (await gw.call("GET", `/api/v1/notifications/${sent.body.notification_uuid}`)).body.escalation
        .policy.levels[0];
      const paged = [...new Set(level.paged.map((page: {name: string}) => page.name))].join(", ");
      return `Level 1: Line 3 (on call: ${names[level.targets[0].on_call]}) · paged ${paged}`;
    };
    const current = alert.locator(".policy-progress li[aria-current=step]");
    await expect.poll(async () => (await current.textContent()) === (await expected())).toBe(true);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });
});
