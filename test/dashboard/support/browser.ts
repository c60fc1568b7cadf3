import {mkdirSync} from "node:fs";
import {join} from "node:path";
import {expect} from "vitest";
import {chromium, type Browser, type BrowserContext, type Page} from "playwright-core";
import {ADMIN_NAME, ADMIN_PASSWORD} from "./dashboard-client.js";
import type {TestGateway} from "../../support/gateway.js";

// The callbacks given to page.evaluate run in the browser; the project compiles without DOM types.
declare const document: any;

const SCREENSHOTS = join(import.meta.dirname, "..", "..", "..", "docs", "screenshots");

/** Debian's chromium, headless, with nothing phoning home (NOTES.md). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ]
  });
}

export const DESKTOP = {width: 1280, height: 860};
export const PHONE = {width: 390, height: 844};

/**
 * A fresh browser profile (no cookies) that may only reach the gateway on 127.0.0.1: any other
 * request is aborted and remembered, so a test can prove the dashboard loads nothing from outside.
 */
export async function openContext(
  browser: Browser,
  viewport = DESKTOP
): Promise<{context: BrowserContext; page: Page; outside: string[]; scriptErrors: string[]}> {
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    isMobile: viewport === PHONE,
    hasTouch: viewport === PHONE
  });
  const outside: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1") return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  const page = await context.newPage();
  // Uncaught exceptions in the dashboard's own scripts (refused requests are not errors here).
  const scriptErrors: string[] = [];
  page.on("pageerror", (error) => scriptErrors.push(error.message));
  return {context, page, outside, scriptErrors};
}

/**
 * A file's one browser session on its gateway, for tests that walk the dashboard in order: the
 * browser, its page (with what it tried to load from outside and its script errors), a way to open
 * a page by route and to close it all.
 */
export async function browserOn(gw: TestGateway) {
  const browser = await launchChromium();
  const {page, outside, scriptErrors} = await openContext(browser);
  return {
    page,
    outside,
    scriptErrors,
    /** Opens a dashboard route ("integrations") and waits for its heading. */
    go: async (route: string) => {
      await page.goto(`${gw.url}/dashboard/#/${route}`);
      await page.locator("h1").first().waitFor();
    },
    close: async () => {
      await browser.close();
      await gw.stop();
    }
  };
}

/** What every dashboard page must do at every size: a heading, nothing wider than the screen, a name for every control. */
export async function checkPage(page: Page, where: string) {
  expect(await page.locator("h1").count(), where).toBe(1);
  // Against the screen's width, not innerWidth: a phone browser zooms out to fit a page that is too wide.
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${where}: wider than the screen`).toBeLessThanOrEqual(page.viewportSize()!.width);
  const unnamed = await page.evaluate(() =>
    [...document.querySelectorAll("input, select, textarea, button")]
      .filter((element: any) => element.offsetParent !== null && !element.classList.contains("visually-hidden"))
      .filter((element: any) => {
        const labelled =
          element.labels?.length || element.getAttribute("aria-label") || element.getAttribute("aria-labelledby");
        return !(labelled || (element.tagName === "BUTTON" && element.textContent?.trim()));
      })
      .map((element: any) => element.outerHTML.slice(0, 120))
  );
  expect(unnamed, `${where}: controls without a name`).toEqual([]);
}

/**
 * Checks the page as above, then, when KLAXON_SCREENSHOTS=1, saves it (whole length) as
 * docs/screenshots/<name>-<size>.png: an ordinary test run leaves the committed images alone.
 */
export async function shoot(page: Page, name: string, size: "desktop" | "phone") {
  await checkPage(page, `${name} (${size})`);
  if (process.env.KLAXON_SCREENSHOTS !== "1") return;
  mkdirSync(SCREENSHOTS, {recursive: true});
  await page.screenshot({path: join(SCREENSHOTS, `${name}-${size}.png`), fullPage: true});
}

/** Opens a dashboard page signed out and signs in through the form, as a person would (the first admin unless told). */
export async function signInThroughPage(
  page: Page,
  gatewayUrl: string,
  route: string,
  who = {name: ADMIN_NAME, password: ADMIN_PASSWORD}
) {
  await page.goto(`${gatewayUrl}/dashboard/#/${route}`);
  await page.getByLabel("Name").fill(who.name);
  await page.getByLabel("Password", {exact: true}).fill(who.password);
  await page.getByRole("button", {name: "Sign in"}).click();
}
