import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser, Page} from "playwright-core";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";
import {firstInstantAtWall} from "../../src/domain/escalation/zoned-time.js";

// Its own file: Ts.ED keeps one injector per process, so a test process serves one gateway at a time.
let gw: TestGateway;
let browser: Browser;
let plant: Awaited<ReturnType<typeof createPlant>>;
let cover: {id: string; starts_at: string; ends_at: string};

const HOUR = 3_600_000;
/** Two days from now on a whole hour: the override the API makes, a day clear of the page's "now". */
const coverStarts = Math.ceil(Date.now() / HOUR) * HOUR + 48 * HOUR;

/** "2026-11-27T08:00", as a datetime-local field takes it, on the wall clock of `zone`. */
function wallTime(ms: number, zone: string): string {
  return new Intl.DateTimeFormat("sv-SE", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit"
  })
    .format(ms)
    .replace(" ", "T");
}

const onCallNames = async (uuid: string): Promise<string> =>
  (await gw.call("GET", `/api/v1/schedules/${uuid}/on-call`)).body.recipients
    .map((r: {name: string}) => r.name)
    .join(", ");

beforeAll(async () => {
  // Each test signs in through the page: on a fast machine the sixth sign-in comes within a minute
  // of the first, which the default budget (5 a minute from one address) refuses with 429.
  gw = await startTestGateway({dashboard: {sign_in_attempts_per_minute: 60}});
  browser = await launchChromium();
  expect((await setAdminPassword(gw)).status).toBe(204);
  plant = await createPlant(gw);
  const override = await gw.call("POST", `/api/v1/schedules/${plant.schedule.uuid}/overrides`, {
    body: {
      recipient_uuid: plant.cem,
      starts_at: new Date(coverStarts).toISOString(),
      ends_at: new Date(coverStarts + 8 * HOUR).toISOString()
    }
  });
  expect(override.status).toBe(201);
  cover = override.body;
  // Office hours only, in a zone with a half-hour offset: the nights and weekends are gaps.
  const office = await gw.call("POST", "/api/v1/schedules", {
    body: {
      name: "Line 3 engineering",
      timezone: "Asia/Kolkata",
      layers: [
        {
          type: "rotation",
          name: "Office hours",
          members: [plant.anna, plant.cem],
          shift_length_weeks: 1,
          starts_at: "2026-03-02T09:00:00+05:30",
          restrictions: {weekdays: ["mon", "tue", "wed", "thu", "fri"], windows: [{start: "09:00", end: "17:00"}]}
        }
      ],
      fallback: plant.crewD
    }
  });
  expect(office.status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

async function openSchedules(page: Page) {
  await signInThroughPage(page, gw.url, "schedules");
  await page.locator("article.schedule").nth(1).waitFor();
}

const card = (page: Page, name: string) =>
  page.locator("article.schedule", {has: page.getByRole("heading", {name, exact: true})});

describe("the Schedules page", () => {
  it("lists the schedules with who is on call now, the next 14 days in their zone, overrides and gaps marked", async () => {
    const {context, page, outside, scriptErrors} = await openContext(browser, DESKTOP);
    const before = await onCallNames(plant.schedule.uuid);
    await openSchedules(page);
    const after = await onCallNames(plant.schedule.uuid);

    const line3 = card(page, "Line 3");
    // Near a hand-off the page may have asked on either side of it.
    expect([before, after]).toContain(await line3.locator(".on-call strong").textContent());
    expect(await line3.locator(".on-call .meta").textContent()).toMatch(/(early|late|night), crew [A-D]/);
    expect(await line3.textContent()).toContain("Times in Europe/Berlin");
    expect(await line3.locator(".timeline-days > li").count()).toBe(14);
    expect(await line3.locator(".segment-gap").count()).toBe(0);

    // The override is marked on the day it starts, on Berlin's wall clock.
    const overrideDay = line3.locator(
      `.timeline-days > li[data-date="${wallTime(coverStarts, "Europe/Berlin").slice(0, 10)}"]`
    );
    const marked = overrideDay.locator(".segment-override").first();
    expect(await marked.getAttribute("title")).toMatch(
      new RegExp(`^${wallTime(coverStarts, "Europe/Berlin").slice(11)}–\\d\\d:\\d\\d Cem · override$`)
    );
    // Placed along the day by the script under the Content-Security-Policy: 08:00 is a third of the track.
    const track = (await overrideDay.locator(".day-track").boundingBox())!;
    const bar = (await marked.boundingBox())!;
    const [hours, minutes] = wallTime(coverStarts, "Europe/Berlin").slice(11).split(":").map(Number);
    expect(Math.abs(bar.x - track.x - ((hours * 60 + minutes) / 1440) * track.width)).toBeLessThan(2);
    expect(bar.width).toBeGreaterThan(0);
    expect(bar.width).toBeLessThanOrEqual((track.width * 8) / 24 + 1);

    const ical = await line3.locator(".copyable code", {hasText: /^http/}).textContent();
    expect(ical).toBe(plant.schedule.ical_url);

    const office = card(page, "Line 3 engineering");
    expect(await office.textContent()).toContain("Times in Asia/Kolkata");
    expect(await office.locator(".segment-gap").first().textContent()).toContain("Gap: Crew D (group)");
    expect(await office.locator(".card-problem").textContent()).toMatch(/gaps? in the next 14 days: Crew D \(group\)/);

    await shoot(page, "schedules", "desktop");
    expect(outside).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("shows an overlapping override's refusal beside the form, adds one that touches, and deletes it", async () => {
    const {context, page, scriptErrors} = await openContext(browser, PHONE);
    page.on("dialog", (dialog) => void dialog.accept());
    await openSchedules(page);
    await shoot(page, "schedules", "phone");
    const line3 = card(page, "Line 3");
    await line3.locator("summary", {hasText: "Overrides"}).click();
    const form = line3.locator("form.override-form");
    await form.getByLabel("Who is on call instead").selectOption({label: "Bert"});
    await form.getByLabel("From").fill(wallTime(coverStarts + 4 * HOUR, "Europe/Berlin"));
    await form.getByLabel("Until").fill(wallTime(coverStarts + 10 * HOUR, "Europe/Berlin"));
    await form.getByRole("button", {name: "Add override"}).click();
    const refusal = form.locator(".form-problem");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(cover.id);
    await shoot(page, "schedules-override-refused", "phone");
    expect((await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/overrides`)).body.items).toHaveLength(1);

    await form.getByLabel("From").fill(wallTime(coverStarts + 8 * HOUR, "Europe/Berlin"));
    await form.getByLabel("Until").fill(wallTime(coverStarts + 12 * HOUR, "Europe/Berlin"));
    await form.getByRole("button", {name: "Add override"}).click();
    await line3.locator("tbody tr", {hasText: "Bert"}).waitFor();
    const {items} = (await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/overrides`)).body;
    expect(
      items.map((item: {recipient_uuid: string; starts_at: string}) => [item.recipient_uuid, item.starts_at])
    ).toEqual([
      [plant.cem, new Date(coverStarts).toISOString()],
      [plant.bert, new Date(coverStarts + 8 * HOUR).toISOString()]
    ]);

    await line3
      .locator("tbody tr", {hasText: "Bert"})
      .getByRole("button", {name: /Delete/})
      .click();
    await expect.poll(async () => line3.locator("tbody tr", {hasText: "Bert"}).count()).toBe(0);
    expect((await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/overrides`)).body.items).toHaveLength(1);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("creates a schedule of a restricted rotation and a shift pattern from the form, read in the zone it names", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await openSchedules(page);
    const creator = page.locator("details.new-schedule");
    await creator.locator("summary").click();
    // The layer buttons stand apart from the Fallback field under them (issue 33: they were cramped).
    const adder = (await creator.getByRole("button", {name: "Add rotation layer"}).boundingBox())!;
    const fallback = (await creator.locator(".field", {has: page.getByLabel("Fallback")}).boundingBox())!;
    expect(fallback.y - (adder.y + adder.height)).toBeGreaterThanOrEqual(16);
    await creator.getByLabel("Name", {exact: true}).fill("Forklift service");
    await creator.getByLabel("Time zone").fill("America/New_York");
    await creator.getByRole("button", {name: "Create schedule"}).click();
    // No start given: the gateway's error lands under its field.
    await creator.locator(".field-error").first().waitFor();
    const start = creator.locator(".field", {has: page.getByLabel("First hand-off")});
    expect(await start.locator(".field-error").textContent()).toBe("must be a valid date-time");

    const rotation = creator.locator("fieldset.layer").nth(0);
    expect(await rotation.locator("legend").first().textContent()).toBe("Layer 1: rotation");
    await rotation.getByLabel("Dora", {exact: true}).check();
    await rotation.getByLabel("Anna", {exact: true}).check();
    await rotation.getByLabel("Shift length").fill("1");
    await rotation.getByLabel("Unit", {exact: true}).selectOption("weeks");
    await rotation.getByLabel("First hand-off").fill("2026-11-02T07:00");
    for (const day of ["Mon", "Tue", "Wed", "Thu", "Fri"]) await rotation.getByLabel(day, {exact: true}).check();
    await rotation.getByLabel("Only between").fill("07:00-15:30, 22:00-06:00");

    // A shift-pattern layer on top: two crews, 12-hour shifts, a cycle of two days with a gap.
    await creator.getByRole("button", {name: "Add shift-pattern layer"}).click();
    const pattern = creator.locator("fieldset.layer").nth(1);
    expect(await pattern.locator("legend").first().textContent()).toBe("Layer 2: shift pattern");
    await pattern.getByLabel("Layer name").fill("Weekend crews");
    await pattern.getByLabel("Shifts of the day").fill("day 07:00, night 19:00");
    await pattern.getByLabel("Crew", {exact: true}).fill("A");
    await pattern.getByLabel("Paged", {exact: true}).selectOption({label: "Cem"});
    await pattern.getByRole("button", {name: "Add crew"}).click();
    await pattern.getByLabel("Crew", {exact: true}).nth(1).fill("D");
    await pattern.getByLabel("Paged", {exact: true}).nth(1).selectOption({label: "Crew D (group)"});
    await pattern.getByLabel("Cycle", {exact: true}).fill("A D\nE -\n");
    await pattern.getByLabel("Day 1 of the cycle").fill("2026-11-07");
    await creator.getByLabel("Fallback", {exact: true}).selectOption({label: "Bert"});
    await creator.getByRole("button", {name: "Create schedule"}).click();
    // An unknown crew name in the cycle is refused at the layer's cycle field.
    const cycle = pattern.locator(".field", {has: page.getByLabel("Cycle", {exact: true})});
    await cycle.locator(".field-error").waitFor();
    expect(await cycle.locator(".field-error").textContent()).toBe(`no crew is named "E"`);

    await shoot(page, "schedule-form", "desktop");
    await pattern.getByLabel("Cycle", {exact: true}).fill("A D\nA -");
    // The crews go to the bottom: the office-hours rotation then wins over them where it has someone.
    await creator.getByRole("button", {name: "Move layer 2 earlier (lower)"}).click();
    expect(await creator.locator("fieldset.layer legend").allTextContents()).toEqual([
      "Layer 1: shift pattern",
      "Crews",
      "Layer 2: rotation",
      "Members, in turn order",
      "Only on"
    ]);
    await creator.getByRole("button", {name: "Create schedule"}).click();
    await card(page, "Forklift service").waitFor();
    const {items} = (await gw.call("GET", "/api/v1/schedules")).body;
    expect(items.find((schedule: {name: string}) => schedule.name === "Forklift service")).toMatchObject({
      timezone: "America/New_York",
      fallback: plant.bert,
      layers: [
        {
          type: "shift_pattern",
          name: "Weekend crews",
          shifts: [
            {name: "day", starts: "07:00"},
            {name: "night", starts: "19:00"}
          ],
          crews: [
            {name: "A", target: plant.cem},
            {name: "D", target: plant.crewD}
          ],
          cycle: [
            ["A", "D"],
            ["A", null]
          ],
          starts_on: "2026-11-07"
        },
        {
          type: "rotation",
          members: [plant.anna, plant.dora],
          shift_length_weeks: 1,
          starts_at: "2026-11-02T12:00:00.000Z",
          restrictions: {
            weekdays: ["mon", "tue", "wed", "thu", "fri"],
            windows: [
              {start: "07:00", end: "15:30"},
              {start: "22:00", end: "06:00"}
            ]
          }
        }
      ]
    });
    expect(await card(page, "Forklift service").textContent()).toContain("Times in America/New_York");
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("edits a schedule in place: its layers come back as saved, and a change is sent as a PATCH", async () => {
    const {context, page, scriptErrors} = await openContext(browser, PHONE);
    await openSchedules(page);
    const office = card(page, "Line 3 engineering");
    await office.locator("summary", {hasText: "Edit schedule"}).click();
    const form = office.locator("form.schedule-form");
    const layer = form.locator("fieldset.layer").first();
    expect(await layer.getByLabel("Layer name").inputValue()).toBe("Office hours");
    expect(await layer.getByLabel("First hand-off").inputValue()).toBe("2026-03-02T09:00");
    expect(await layer.getByLabel("Only between").inputValue()).toBe("09:00-17:00");
    expect(await layer.getByLabel("Sat", {exact: true}).isChecked()).toBe(false);
    expect(await layer.getByLabel("Mon", {exact: true}).isChecked()).toBe(true);
    expect(await form.getByLabel("Fallback", {exact: true}).inputValue()).toBe(plant.crewD);
    // A shift pattern comes back as written: one cycle line per day, its crews with their targets.
    const line3 = card(page, "Line 3").locator("fieldset.layer").first();
    const pattern = plant.body.layers[0] as {cycle: string[][]; crews: Array<{name: string; target: string}>};
    expect(await line3.getByLabel("Cycle", {exact: true}).inputValue()).toBe(
      pattern.cycle.map((day) => day.join(" ")).join("\n")
    );
    expect(await line3.getByLabel("Paged", {exact: true}).nth(3).inputValue()).toBe(pattern.crews[3].target);

    await layer.getByLabel("Sat", {exact: true}).check();
    await layer.getByLabel("Only between").fill("08:00-18:00");
    await layer.getByRole("button", {name: "Move Anna down"}).click();
    await form.getByLabel("Fallback", {exact: true}).selectOption({label: "Bert"});
    await shoot(page, "schedule-edit", "phone");
    await form.getByRole("button", {name: "Save schedule"}).click();
    await expect.poll(async () => (await office.locator(".meta").first().textContent()) ?? "").toContain("Bert");
    const {items} = (await gw.call("GET", "/api/v1/schedules")).body;
    expect(items.find((schedule: {name: string}) => schedule.name === "Line 3 engineering")).toMatchObject({
      fallback: plant.bert,
      layers: [
        {
          name: "Office hours",
          members: [plant.cem, plant.anna],
          shift_length_weeks: 1,
          starts_at: "2026-03-02T03:30:00.000Z",
          restrictions: {
            weekdays: ["mon", "tue", "wed", "thu", "fri", "sat"],
            windows: [{start: "08:00", end: "18:00"}]
          }
        }
      ]
    });
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("deletes a schedule from its edit section, and shows why one still paged cannot be", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    page.on("dialog", (dialog) => void dialog.accept());
    const office = (await gw.call("GET", "/api/v1/schedules")).body.items.find(
      (schedule: {name: string}) => schedule.name === "Line 3 engineering"
    );
    const heartbeat = await gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "line-3-engineering-plc", period_seconds: 3600, target: office.uuid}
    });
    expect(heartbeat.status).toBe(201);
    await openSchedules(page);

    const paged = card(page, "Line 3 engineering");
    await paged.locator("summary", {hasText: "Edit schedule"}).click();
    await paged.getByRole("button", {name: "Delete schedule"}).click();
    const refusal = paged.locator(".card-problem[role=alert]");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("line-3-engineering-plc");

    const forklift = card(page, "Forklift service");
    await forklift.locator("summary", {hasText: "Edit schedule"}).click();
    await forklift.getByRole("button", {name: "Delete schedule"}).click();
    await expect.poll(async () => forklift.count()).toBe(0);
    const names = (await gw.call("GET", "/api/v1/schedules")).body.items.map(
      (schedule: {name: string}) => schedule.name
    );
    expect(names).toEqual(["Line 3", "Line 3 engineering"]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("reads wall times in the browser as the gateway does: DST changes, half-hour zones, midnight jumps", async () => {
    const {context, page} = await openContext(browser, DESKTOP);
    await page.goto(`${gw.url}/dashboard/`);
    const walls: Array<[string, string]> = [
      ["Europe/Berlin", "2026-03-29T02:30"], // skipped: the jump, 03:00 CEST
      ["Europe/Berlin", "2026-10-25T02:30"], // repeated: the first, still CEST
      ["Europe/Berlin", "2026-11-26T08:00"],
      ["Asia/Kolkata", "2026-11-26T08:00"],
      ["Australia/Adelaide", "2026-10-04T02:30"], // skipped, half-hour offsets on both sides
      ["Australia/Lord_Howe", "2026-10-04T02:15"], // skipped by a half-hour change
      ["America/Santiago", "2026-09-06T00:00"], // midnight itself is skipped
      ["America/New_York", "2028-02-29T07:00"]
    ];
    // A string, not a function: the test runner rewrites import() in the functions it compiles.
    const answers = await page.evaluate<{instants: number[]; dayHours: Array<[string, number]>}>(`(async (cases) => {
      const zoned = await import("/dashboard/lib/zoned.js");
      return {
        instants: cases.map(([zone, wall]) => zoned.instantOf(wall, zone)),
        dayHours: ["2026-03-29T10:00:00Z", "2026-10-25T10:00:00Z", "2026-11-26T10:00:00Z"].map((at) => {
          const [day] = zoned.zonedDays(Date.parse(at), "Europe/Berlin", 1);
          return [day.date, (day.ends - day.starts) / 3600000];
        })
      };
    })(${JSON.stringify(walls)})`);
    const expected = walls.map(([zone, wall]) => firstInstantAtWall(Date.parse(`${wall}Z`), zone));
    expect(answers.instants).toEqual(expected);
    expect(answers.instants.slice(0, 2).map((ms) => new Date(ms).toISOString())).toEqual([
      "2026-03-29T01:00:00.000Z",
      "2026-10-25T00:30:00.000Z"
    ]);
    expect(answers.dayHours).toEqual([
      ["2026-03-29", 23],
      ["2026-10-25", 25],
      ["2026-11-26", 24]
    ]);
    await context.close();
  });
});
