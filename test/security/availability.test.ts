import {afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {launchChromium, openContext} from "../dashboard/support/browser.js";

// Issue 18 items 1, 3 and 8: one bad sender must not silence the good ones behind its address,
// a deeply nested body must not reach the framework, and what /docs and X-Request-Id let in.
const FAILURES_PER_MINUTE = 20; // the default budget
const SIGN_INS_PER_MINUTE = 5; // the default budget
const WRONG_KEYS = 25;

let gw: TestGateway;
let target: string;
// The limiters measure time on this clock: each test starts with full buckets, and none sleeps.
const clock = new ManualClock(Date.UTC(2026, 10, 25, 8, 0, 0));

beforeAll(async () => {
  gw = await startTestGateway({}, {clock});
  target = await createRecipient(gw);
});
beforeEach(() => clock.advance(3600_000));
afterAll(() => gw?.stop());

async function heartbeatPingPath(name: string): Promise<string> {
  const created = await gw.call("POST", "/api/v1/heartbeats", {body: {name, period_seconds: 60, target}});
  expect(created.status).toBe(201);
  return new URL(created.body.ping_url as string).pathname;
}

// A new number each time it must count as a new guess: a repeated wrong key counts only against itself.
const wrongKey = (n: number) => `klx_guess${String(n).padStart(3, "0")}_${"x".repeat(40)}`;
const throttleLines = () => gw.logLines.filter((line) => line.includes("address throttled"));

describe("failed authentication from a shared address", () => {
  it("answers 429 to new wrong keys past the budget, but a valid key and a valid ping URL still pass", async () => {
    const ping = await heartbeatPingPath("press-1");
    const statuses = [];
    for (let n = 0; n < WRONG_KEYS; n++)
      statuses.push((await gw.call("GET", "/api/v1/notifications", {key: wrongKey(n)})).status);
    expect(statuses).toEqual([
      ...Array(FAILURES_PER_MINUTE).fill(401),
      ...Array(WRONG_KEYS - FAILURES_PER_MINUTE).fill(429)
    ]);

    expect((await gw.call("GET", "/api/v1/notifications")).status).toBe(200);
    expect((await gw.call("POST", ping, {key: null})).status).toBe(200);
    expect((await gw.call("GET", "/api/v1/notifications", {key: wrongKey(99)})).status).toBe(429);

    const ready = await gw.call("GET", "/readyz");
    expect(ready.body.throttled_addresses).toEqual([expect.stringMatching(/127\.0\.0\.1$/)]);
    // Five refusals, one line: logged once per address per minute.
    expect(throttleLines()).toHaveLength(1);
    clock.advance(60_000);
    expect((await gw.call("GET", "/readyz")).body.throttled_addresses).toEqual([]);
  });

  it("answers a rotated ping URL 404 against its own budget, even once the address is throttled", async () => {
    const old = await heartbeatPingPath("press-2");
    expect((await gw.call("POST", "/api/v1/heartbeats/press-2/rotate-ping-url")).status).toBe(200);
    const current = new URL((await gw.call("GET", "/api/v1/heartbeats/press-2")).body.ping_url as string).pathname;
    const pollOld = async (times: number, everyMs: number) => {
      const statuses = new Set<number>();
      for (let i = 0; i < times; i++) {
        statuses.add((await gw.call("GET", old, {key: null})).status);
        clock.advance(everyMs);
      }
      return [...statuses];
    };
    expect(await pollOld(FAILURES_PER_MINUTE, 1000)).toEqual([404]);
    // The old URL was charged to the address once; the rest of the budget is there for others.
    const wrong = await gw.call("GET", "/api/v1/notifications", {key: wrongKey(200)});
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("ratelimit")).toMatch(/^"failed-auth-per-address";r=1[789];/);

    // Someone else behind the address spends its budget: the old URL still hears 404, for good.
    for (let n = 201; n <= 201 + FAILURES_PER_MINUTE; n++)
      await gw.call("GET", "/api/v1/notifications", {key: wrongKey(n)});
    expect((await gw.call("GET", "/api/v1/notifications", {key: wrongKey(300)})).status).toBe(429);
    expect(await pollOld(3 * FAILURES_PER_MINUTE, 3000)).toEqual([404]);
    expect((await gw.call("GET", current, {key: null})).status).toBe(200);
  });

  it("answers a revoked key 401 saying so, again and again, while the address's budget stays", async () => {
    const created = await gw.call("POST", "/api/v1/keys", {body: {name: "old-script", scopes: ["notifications:read"]}});
    expect((await gw.call("DELETE", `/api/v1/keys/${created.body.id}`)).status).toBe(204);
    for (let i = 0; i < FAILURES_PER_MINUTE; i++) {
      const answer = await gw.call("GET", "/api/v1/notifications", {key: created.body.key});
      expect(answer.status).toBe(401);
      expect(answer.body.detail).toBe("the API key is unknown or revoked");
    }
    expect((await gw.call("GET", "/api/v1/notifications", {key: wrongKey(400)})).status).toBe(401);
    expect((await gw.call("GET", "/readyz")).body.throttled_addresses).toEqual([]);
  });
});

// 20 KB: well under the 64 KiB body limit, far past any stack's recursion depth in a deep copy.
const deep = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

describe("deeply nested JSON", () => {
  it.each([
    ["the send route", "/api/v1/notifications/send", undefined],
    ["a framework route", "/api/v1/recipients", undefined],
    ["dashboard sign-in", "/dashboard/api/sign-in", null],
    ["dashboard password", "/dashboard/api/password", null]
  ])("refuses 10,000 levels on %s with 400 invalid_json, logging little", async (_what, path, key) => {
    const logged = gw.logLines.length;
    for (let i = 0; i < 5; i++) {
      const answer = await gw.call("POST", path, {
        key,
        raw: deep(10_000),
        headers: {"Content-Type": "application/json"}
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({code: "invalid_json"});
      expect(answer.body.detail).toContain("64 levels");
    }
    const lines = gw.logLines.slice(logged);
    expect(lines.filter((line) => /"level":"(warn|error)"/.test(line))).toEqual([]);
    expect(lines.join("\n").length).toBeLessThan(5 * 400);
  });

  it("reads 64 levels, and brackets inside strings do not count", async () => {
    const answer = await gw.call("POST", "/api/v1/recipients", {
      raw: `{"name": "${"[".repeat(100)}", "x": ${deep(63)}}`,
      headers: {"Content-Type": "application/json"}
    });
    // Past the depth check: the model refuses the unknown field.
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_request");
  });

  it("charges a dashboard sign-in attempt before the body is validated", async () => {
    const statuses = [];
    for (let i = 0; i <= SIGN_INS_PER_MINUTE; i++)
      statuses.push((await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {}})).status);
    expect(statuses).toEqual([...Array(SIGN_INS_PER_MINUTE).fill(400), 429]);
  });
});

describe("/docs and X-Request-Id", () => {
  it("serves /docs with a Content-Security-Policy and nothing from another host", async () => {
    const page = await fetch(`${gw.url}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain("swagger-ui-bundle.js");
    expect(html).not.toMatch(/(https?:)?\/\/[a-z]/i);
  });

  it("renders Swagger UI in Chromium under that policy, asking nothing of the internet", async () => {
    const browser = await launchChromium();
    try {
      const {page, outside, scriptErrors} = await openContext(browser);
      const refused: string[] = [];
      page.on("console", (message) => {
        if (message.text().includes("Content Security Policy")) refused.push(message.text());
      });
      await page.goto(`${gw.url}/docs/`);
      await page.locator(".swagger-ui .info .title").filter({hasText: "Klaxon API"}).waitFor();
      await page.locator(".opblock").first().waitFor();
      expect({outside, scriptErrors, refused}).toEqual({outside: [], scriptErrors: [], refused: []});
    } finally {
      await browser.close();
    }
  });

  it.each([
    ["a framework route", "GET", "/healthz", undefined],
    ["the send route", "POST", "/api/v1/notifications/send", {}]
  ])("echoes a well-formed X-Request-Id on %s and replaces others", async (_what, method, path, body) => {
    const idOf = async (id: string) =>
      (await gw.call(method, path, {body, headers: {"X-Request-Id": id}})).headers.get("x-request-id");
    expect(await idOf("trace-01:abc.DEF_9")).toBe("trace-01:abc.DEF_9");
    const long = "a".repeat(200);
    for (const bad of [long, "two words", "x".repeat(129), "<script>"]) {
      const given = await idOf(bad);
      expect(given).not.toBe(bad);
      expect(given).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(gw.logLines.some((line) => line.includes(long))).toBe(false);
  });
});
