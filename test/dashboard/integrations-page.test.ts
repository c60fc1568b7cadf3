import net from "node:net";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Locator, Page} from "playwright-core";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {browserOn, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";
import {ModbusServer} from "../support/modbus-server.js";

// The Integrations page in a real browser, signed in once: each test adds to what the last left.
let gw: TestGateway;
let session: Awaited<ReturnType<typeof browserOn>>;
let page: Page;

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  await createRecipient(gw, {name: "Maria Schmidt", email: "maria@factory.lan", phone: null});
  await setAdminPassword(gw);
  session = await browserOn(gw);
  page = session.page;
  await signInThroughPage(page, gw.url, "integrations");
  await page.locator("h1", {hasText: "Integrations"}).waitFor();
});
afterAll(() => session?.close());

const go = (route: string) => session.go(route);

/** Types into each control with this label, or picks the option of a select. */
async function fillIn(form: Locator, values: Record<string, string>) {
  for (const [label, value] of Object.entries(values)) {
    const control = form.getByLabel(label, {exact: true});
    if ((await control.evaluate((element) => element.tagName)) === "SELECT") await control.selectOption(value);
    else await control.fill(value);
  }
}

/** The "Add an integration" form on a fresh load of the page, its name typed and its kind chosen. */
async function addIntegrationForm(name: string, kind: string) {
  await go("integrations");
  await page.reload();
  const form = page.locator("form", {hasText: "Add an integration"});
  await form.getByLabel("Name", {exact: true}).fill(name);
  await form.getByLabel("Kind").selectOption(kind);
  return form;
}

describe("the Integrations page in a real browser", () => {
  it("rotates an integration's secret and URL, showing the new secret once", async () => {
    const target = (await gw.call("GET", "/api/v1/recipients")).body.items[0].uuid;
    const before = (
      await gw.call("POST", "/api/v1/integrations", {body: {name: "scada-line-3", kind: "generic", target}})
    ).body;
    await go("integrations");
    // The page is already open at this address from the test before: load it again to see the new integration.
    await page.reload();
    const card = () => page.locator("article", {hasText: "scada-line-3"});
    await card().waitFor();
    page.once("dialog", (dialog) => void dialog.accept());
    await card().getByRole("button", {name: "Rotate credentials"}).click();
    const secret = page.locator("section.secret-once code");
    await secret.waitFor();
    const shown = (await secret.textContent()) as string;
    expect(shown).toMatch(/^whsec_/);
    expect(shown).not.toBe(before.secret);
    // The id `klaxon fire` needs stands next to the secret (issue 33).
    expect(await page.locator("section.secret-once").textContent()).toContain(
      `Integration id: ${before.id} (the device CLI: KLAXON_INTEGRATION_ID=${before.id}`
    );
    expect(
      await card()
        .locator("code", {hasText: new RegExp(`^${before.id}$`)})
        .count()
    ).toBe(1);
    const url = (await card().locator("code", {hasText: /^http/}).textContent()) as string;
    expect(url).not.toBe(before.url);
    const fire = (address: string) =>
      fetch(address, {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({alert_id: "pump-2", action: "fire", title: "Pump 2 stalled"})
      });
    expect((await fire(before.url)).status).toBe(401);
    expect((await fire(url)).status).toBe(202);
  });

  it("adds an email integration with rules, then shows its address, counters and kept messages", async () => {
    await go("integrations");
    await page.reload();
    const form = page.locator("form", {hasText: "Add an integration"});
    await form.getByLabel("Name").fill("nas-01");
    await form.getByLabel("Kind").selectOption("email");
    await form.getByLabel("Text or pattern").fill("(unclosed");
    await form.getByLabel("Match").selectOption("regex");
    await form.getByRole("button", {name: "Add integration"}).click();
    // The gateway's words land beside the rule's pattern.
    const patternError = form.locator(".field", {has: page.getByLabel("Text or pattern")}).locator(".field-error");
    await expect.poll(() => patternError.textContent()).toMatch(/not a regular expression/);
    await form.getByLabel("Text or pattern").fill("Volume (\\d+) .*degraded");
    await form.getByLabel("Alert key").fill("volume-{1}");
    await form.getByLabel("Priority", {exact: true}).last().selectOption("critical");
    await form.getByRole("button", {name: "Add rule"}).click();
    await form.getByLabel("Text or pattern").nth(1).fill("repaired");
    await form.getByLabel("Then").nth(1).selectOption("resolve");
    await form.getByRole("button", {name: "Add integration"}).click();
    await page
      .getByText(/Integration nas-01 added\. Devices mail [0-9a-f]{24}@/)
      .first()
      .waitFor();

    const created = (await gw.call("GET", "/api/v1/integrations?limit=200")).body.items.find(
      (item: {name: string}) => item.name === "nas-01"
    );
    expect(created.rules).toEqual([
      {
        field: "subject",
        match: "regex",
        pattern: "Volume (\\d+) .*degraded",
        action: "fire",
        alert_key: "volume-{1}",
        priority: "critical"
      },
      {field: "subject", match: "contains", pattern: "repaired", action: "resolve"}
    ]);
    const intake = gw.gateway.deviceIntake;
    const record = gw.gateway.config.data.integrations.find((item) => item.id === created.id)!;
    const message = {
      transport: "email" as const,
      origin: "nas-01@plant.lan",
      summary: "Weekly report",
      body: "All volumes healthy",
      size: 30
    };
    // Kept, not paged: this card shows the log of an integration set to keep what maps to nothing.
    await intake.take({...record, unmapped: "keep"}, message, []);
    intake.refuse(record, {...message, summary: "(not read)"}, "too large: 9000 bytes, the limit is 4096");
    await gw.gateway.journal.write(() => undefined);

    await page.reload();
    const card = page.locator("article.integration", {hasText: "nas-01"});
    await card.waitFor();
    expect(await card.locator("code", {hasText: "@"}).textContent()).toBe(created.address);
    expect(await card.locator(".integration-stats").textContent()).toBe(
      "2 received: 0 accepted, 1 unmapped, 1 refused"
    );
    expect(await card.locator(".integration-error").textContent()).toMatch(
      /^too large: 9000 bytes, the limit is 4096 \(/
    );
    await card.locator("summary", {hasText: "Kept messages"}).click();
    const rows = card.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain("too large: 9000 bytes");
    expect(await rows.nth(1).textContent()).toContain("Weekly report");
    expect(await rows.nth(1).textContent()).toContain("matched no rule");
  });

  it("shows an MQTT integration's broker, and why it is down", async () => {
    const target = (await gw.call("GET", "/api/v1/recipients")).body.items[0].uuid;
    // A loopback port with nothing listening: the broker is down.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const broker = `mqtt://127.0.0.1:${port}`;
    const body = {name: "press-line", kind: "mqtt", target, broker_url: broker, topics: ["plant/press/#"]};
    expect((await gw.call("POST", "/api/v1/integrations", {body})).status).toBe(201);
    const brokerLine = page.locator("article.integration", {hasText: "press-line"}).locator("dd", {hasText: broker});
    await expect
      .poll(async () => {
        await page.reload();
        await brokerLine.waitFor();
        return brokerLine.textContent();
      })
      .toMatch(new RegExp(`^${broker} \\(plant/press/#\\), down since .*: .*ECONNREFUSED`));
    expect(await brokerLine.getAttribute("class")).toBe("integration-error");
  });

  it("adds a modbus integration through the form, shows what the gateway refuses beside the point, lands on its points and reads them now", async () => {
    const device = await ModbusServer.start();
    try {
      await device.set("hr", 100, 64);
      const form = await addIntegrationForm("press-9", "modbus");
      // Polled once a minute: a new value shows only through "Read now".
      await fillIn(form, {
        Host: "127.0.0.1",
        Port: String(device.port),
        "Poll every (ms)": "60000",
        "Point 1 name": "oil_temp",
        "Point 1 table": "coil",
        "Point 1 address": "100",
        "Point 1 type": "float32",
        "Point 1 unit": "°C",
        "Point 1 alarm when": ">",
        "Point 1 alarm value": "80",
        "Point 1 alarm title": "Press 9 oil {value} {unit}"
      });
      await form.getByRole("button", {name: "Add point"}).click();
      await form.getByLabel("Point 2 name").fill("pressure");
      await form.getByLabel("Point 2 address").fill("101");
      await form.getByRole("button", {name: "Add integration"}).click();
      // The gateway's words land beside the point's type: a coil holds one bit.
      const typeError = form.locator(".field", {has: page.getByLabel("Point 1 type")}).locator(".field-error");
      await expect.poll(() => typeError.textContent()).toMatch(/a coil holds one bit: its type is bool/);
      await fillIn(form, {"Point 1 table": "holding_register", "Point 1 type": "uint16"});
      await form.getByRole("button", {name: "Add integration"}).click();
      const card = page.locator("article.integration", {hasText: "press-9"});
      // The page lands on the new integration's card: its points, their live state, "Read now".
      await expect.poll(() => card.evaluate((article) => article === article.ownerDocument.activeElement)).toBe(true);
      const row = card.locator("tr", {hasText: "oil_temp"});
      await expect.poll(() => row.textContent()).toContain("holding_register 100 (uint16)");
      expect(await card.locator("tr", {hasText: "pressure"}).textContent()).toContain("holding_register 101 (uint16)");
      await device.set("hr", 100, 91);
      await card.getByRole("button", {name: "Read now"}).click();
      await expect.poll(() => row.textContent()).toContain("91 °C");
      expect(await row.textContent()).toMatch(/good/);
      expect(await card.locator("dd", {hasText: /^127\.0\.0\.1: /}).textContent()).toContain("connected");
      // No secret or events URL for a device Klaxon asks itself.
      expect(await page.locator("section.secret-once").count()).toBe(0);
      const created = (await gw.call("GET", "/api/v1/integrations?limit=200")).body.items.find(
        (item: {name: string}) => item.name === "press-9"
      );
      expect(created).toMatchObject({
        url: null,
        modbus: {host: "127.0.0.1", port: device.port, unit_id: 1, poll_interval_ms: 60_000},
        points: [
          {
            name: "oil_temp",
            table: "holding_register",
            address: 100,
            type: "uint16",
            unit: "°C",
            alarm: {when: ">", value: 80, title: "Press 9 oil {value} {unit}"}
          },
          {name: "pressure", table: "holding_register", address: 101, type: "uint16"}
        ]
      });
      expect(created.points[1].alarm ?? null).toBeNull();
    } finally {
      await device.stop();
    }
  });

  it("adds an opcua integration through the form: its server, login, alarms and a point on a node id", async () => {
    const form = await addIntegrationForm("boiler-house", "opcua");
    // Nothing listens on port 1: the link keeps retrying, which this test does not mind.
    await fillIn(form, {
      "Endpoint URL": "opc.tcp://127.0.0.1:1",
      "Security mode": "Sign",
      User: "klaxon",
      Password: "s3cret-pass",
      "Point 1 name": "temperature",
      "Point 1 node id": "ns=2;s=Boiler.Temperature",
      "Point 1 alarm when": ">=",
      "Point 1 alarm value": "95",
      "Point 1 alarm priority": "critical"
    });
    await form.getByRole("button", {name: "Add integration"}).click();
    const policyError = form.locator(".field", {has: page.getByLabel("Security policy")}).locator(".field-error");
    await expect.poll(() => policyError.textContent()).toMatch(/security mode "None" goes with policy "None"/);
    await form.getByLabel("Security mode").selectOption("None");
    await form.getByRole("button", {name: "Add integration"}).click();
    await page
      .locator("article.integration", {hasText: "boiler-house"})
      .locator("tr", {hasText: "temperature"})
      .waitFor();
    const created = (await gw.call("GET", "/api/v1/integrations?limit=200")).body.items.find(
      (item: {name: string}) => item.name === "boiler-house"
    );
    expect(created).toMatchObject({
      url: null,
      opcua: {
        endpoint_url: "opc.tcp://127.0.0.1:1",
        security_mode: "None",
        security_policy: "None",
        user: "klaxon",
        alarms: true
      },
      points: [
        {
          name: "temperature",
          node_id: "ns=2;s=Boiler.Temperature",
          alarm: {when: ">=", value: 95, priority: "critical"}
        }
      ]
    });
    expect(JSON.stringify(created)).not.toContain("s3cret-pass");
  });

  it("pages a schedule chosen by name as a heartbeat's target; the schedule shows its uuid, and the Notifications filter offers it", async () => {
    const maria = (await gw.call("GET", "/api/v1/recipients")).body.items[0].uuid;
    const rotation = {type: "rotation", members: [maria], starts_at: "2026-01-05T06:00:00Z", shift_length_hours: 12};
    const schedule = (
      await gw.call("POST", "/api/v1/schedules", {
        body: {name: "Maintenance on-call", timezone: "Europe/Berlin", layers: [rotation], fallback: maria}
      })
    ).body;
    await go("integrations");
    await page.reload();
    const form = page.locator("form", {hasText: "Add heartbeat"});
    await form.getByLabel("Name").fill("compressor-2");
    await form.getByLabel("Page when it goes silent").selectOption({label: "Maintenance on-call (schedule)"});
    await form.getByRole("button", {name: "Add heartbeat"}).click();
    const card = page.locator("article.heartbeat", {hasText: "compressor-2"});
    await card.waitFor();
    expect(await card.textContent()).toContain("Maintenance on-call (schedule) at high");
    expect((await gw.call("GET", "/api/v1/heartbeats/compressor-2")).body.target).toBe(schedule.uuid);

    await go("schedules");
    const scheduleCard = page.locator("article.schedule", {hasText: "Maintenance on-call"});
    await scheduleCard.waitFor();
    expect(await scheduleCard.locator(".copyable code", {hasText: schedule.uuid}).count()).toBe(1);
    expect(await scheduleCard.getByRole("button", {name: "Copy UUID"}).count()).toBe(1);

    await go("notifications");
    const filter = page.getByLabel("Recipient, group or schedule");
    await filter.selectOption({label: "Maintenance on-call (schedule)"});
    expect(await filter.inputValue()).toBe(schedule.uuid);
  });

  it("loaded nothing from outside the box and threw no script errors", () => {
    expect(session.outside).toEqual([]);
    expect(session.scriptErrors).toEqual([]);
  });
});
