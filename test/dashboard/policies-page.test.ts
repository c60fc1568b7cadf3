import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";
import {DESKTOP, launchChromium, openContext, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let plant: Awaited<ReturnType<typeof createPlant>>;

beforeAll(async () => {
  gw = await startTestGateway();
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
});
