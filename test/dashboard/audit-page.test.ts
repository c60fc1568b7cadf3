import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser, Page} from "playwright-core";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {DESKTOP, launchChromium, openContext, PHONE, shoot, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// The callbacks given to page.evaluate run in the browser; the project compiles without DOM types.
declare const document: any;
declare const window: any;

let gw: TestGateway;
let browser: Browser;
let integrationId: string;

/**
 * Integrations as actors: their events put long ids, long sources and long details (alert ids,
 * titles, links) into the audit log, next to the short entries of keys and the dashboard.
 */
async function seed() {
  const maria = await createRecipient(gw, {name: "Maria Schmidt", phone: "+4915123456789", email: "maria@factory.lan"});
  const group = await gw.call("POST", "/api/v1/groups", {
    body: {name: "Press line 7 maintenance and night shift", members: [maria], strategy: "sequential"}
  });
  const generic = await gw.call("POST", "/api/v1/integrations", {
    body: {name: "go-services-production-cluster-eu-central-monitoring", kind: "generic", target: group.body.uuid}
  });
  expect(generic.status).toBe(201);
  integrationId = generic.body.id;
  const events = [
    {
      alert_id: "kubernetes/production/eu-central-1/namespace-payments/deployment-payment-gateway-api/pod-crashloop",
      action: "fire",
      title: "Pod payment-gateway-api-7d9f8c6b5-x2k4p restarting in a crash loop",
      message:
        "Back-off restarting failed container payment-gateway-api in pod payment-gateway-api-7d9f8c6b5-x2k4p_payments(4f1c2e3a-9b8d-4c7e-a6f5-0123456789ab)",
      severity: "critical",
      source: "prometheus-k8s-production-eu-central-1.monitoring.svc.cluster.local",
      link: "https://grafana.factory.lan/d/kubernetes-pods/pods?orgId=1&var-namespace=payments&var-pod=payment-gateway-api-7d9f8c6b5-x2k4p&from=now-6h&to=now"
    },
    {
      alert_id: "db1-disk",
      action: "fire",
      title: "Disk full",
      message: "db1 /var at 97%",
      severity: "error",
      source: "db1",
      link: "https://grafana.factory.lan/d/db1"
    },
    {
      alert_id: "db1-disk",
      action: "fire",
      title: "Disk full",
      message: "db1 /var at 98%",
      severity: "error",
      source: "db1"
    },
    {alert_id: "db1-disk", action: "resolve"}
  ];
  for (const event of events) {
    const sent = await gw.call("POST", `/api/v1/integrations/${integrationId}/events`, {body: event});
    expect(sent.status).toBe(202);
  }
  await gw.gateway.services.runner.idle();
}

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  browser = await launchChromium();
  expect((await setAdminPassword(gw)).status).toBe(204);
  await seed();
});
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

/** The page's width, and the tallest row of the audit table (a row is a card on a phone). */
function measure(page: Page) {
  return page.evaluate(() => {
    const rows = [...document.querySelectorAll(".data-table tbody tr")];
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      clientWidth: document.documentElement.clientWidth,
      rows: rows.length,
      tallest: Math.max(...rows.map((row: any) => row.getBoundingClientRect().height)),
      tableOverflow: [...document.querySelectorAll(".table-wrap")].map(
        (wrap: any) => wrap.scrollWidth - wrap.clientWidth
      )
    };
  });
}

describe("the audit log page with integrations as actors", () => {
  for (const [size, viewport, tallest] of [
    ["desktop", DESKTOP, 120],
    ["phone", PHONE, 300]
  ] as const) {
    it(`fits a ${size} screen, rows of bounded height, the full text still at hand`, async () => {
      const {context, page, outside, scriptErrors} = await openContext(browser, viewport);
      await signInThroughPage(page, gw.url, "audit");
      await page.locator("tbody tr").first().waitFor();
      const measured = await measure(page);
      await shoot(page, "audit-log-integrations", size);
      expect(measured.rows).toBeGreaterThanOrEqual(6);
      // A phone browser widens innerWidth to fit a page that is too wide: compare with the screen too.
      expect(measured.scrollWidth, "wider than the window").toBeLessThanOrEqual(measured.innerWidth);
      expect(measured.scrollWidth, "wider than the screen").toBeLessThanOrEqual(viewport.width);
      expect(
        measured.tableOverflow.every((overflow: number) => overflow <= 0),
        "the table scrolls sideways"
      ).toBe(true);
      expect(measured.tallest, "a row grows with its detail").toBeLessThanOrEqual(tallest);

      // Cut to one line, yet all there: the whole id in the tooltip, the whole detail one click away.
      const actor = page
        .locator("tbody tr", {hasText: "notification.accepted"})
        .first()
        .locator("td")
        .first()
        .locator(".clip");
      expect(await actor.getAttribute("title")).toBe(integrationId);
      // Who by name, not only by id (issue 33): the integration's name stands beside its id.
      expect(
        await page
          .locator("tbody tr", {hasText: "notification.accepted"})
          .first()
          .locator("td")
          .first()
          .locator(".audit-name")
          .textContent()
      ).toBe("go-services-production-cluster-eu-central-monitoring");
      expect(await page.locator(".clip", {hasText: "prometheus-k8s"}).getAttribute("title")).toBe(
        "prometheus-k8s-production-eu-central-1.monitoring.svc.cluster.local"
      );
      // The row still reads as a sentence (and copies as one): who, what, to what, with which detail.
      expect(await page.locator("tbody tr", {hasText: "dashboard.signed_in"}).first().textContent()).toMatch(
        /dashboard admin.*dashboard\.signed_in.*"address":"127\.0\.0\.1"/
      );
      const detail = page.locator("tbody tr", {hasText: "integration.created"}).locator("details.audit-detail");
      await detail.locator("summary").click();
      await expect.poll(() => detail.locator("pre").isVisible()).toBe(true);
      expect(JSON.parse((await detail.locator("pre").textContent()) as string)).toMatchObject({
        name: "go-services-production-cluster-eu-central-monitoring"
      });
      const opened = await measure(page);
      expect(opened.scrollWidth, "an opened detail widens the page").toBeLessThanOrEqual(viewport.width);
      expect(
        opened.tableOverflow.every((overflow: number) => overflow <= 0),
        "an opened detail widens the table"
      ).toBe(true);

      expect(outside).toEqual([]);
      expect(scriptErrors).toEqual([]);
      await context.close();
    });
  }
});
