import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";

let gw: TestGateway;
let alice: string;
// Rate limits are measured on this clock: each test starts with full buckets, and no test sleeps.
const clock = new ManualClock(Date.UTC(2026, 10, 22, 8, 0, 0));

beforeAll(async () => {
  gw = await startTestGateway({rate_limit: {per_second: 1, burst: 50, auth_failures_per_minute: 6}}, {clock});
  alice = await createRecipient(gw);
});
beforeEach(() => clock.advance(3600_000));
afterAll(() => gw.stop());

async function newKey(scopes: string[], name = "integration") {
  const answer = await gw.call("POST", "/api/v1/keys", {body: {name, scopes}});
  expect(answer.status).toBe(201);
  return answer.body as {id: string; key: string; scopes: string[]};
}

describe("API keys", () => {
  it("shows a new key's secret once, in the klx_<id>_<secret> format", async () => {
    const created = await newKey(["notifications:read"], "grafana");
    expect(created.key).toMatch(/^klx_[a-z0-9]{8}_[A-Za-z0-9_-]{32,}$/);
    expect(created.key.startsWith(`klx_${created.id}_`)).toBe(true);
    const list = await gw.call("GET", "/api/v1/keys");
    const listed = list.body.items.find((item: {id: string}) => item.id === created.id);
    expect(listed).toMatchObject({name: "grafana", scopes: ["notifications:read"], revoked_at: null});
    expect(JSON.stringify(list.body)).not.toContain(created.key.split("_").slice(2).join("_"));
    expect(JSON.stringify(list.body)).not.toMatch(/secret_hash|"key"/);
  });

  it("stores only a hash of the secret", async () => {
    const created = await newKey(["notifications:read"]);
    const {readFileSync} = await import("node:fs");
    const file = readFileSync(`${gw.dataDir}/config.json`, "utf8");
    expect(file).not.toContain(created.key.slice(13));
    expect(file).toContain(created.id);
  });

  it("refuses a key creation with an unknown scope", async () => {
    const answer = await gw.call("POST", "/api/v1/keys", {body: {name: "x", scopes: ["everything"]}});
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].pointer).toMatch(/^\/scopes/);
  });

  it("answers 401 without a key, with an unknown key and with a revoked key", async () => {
    const path = "/api/v1/recipients";
    const missing = await gw.call("GET", path, {key: null});
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({code: "unauthenticated", type: "/problems/unauthenticated"});
    expect((await gw.call("GET", path, {key: "klx_aaaaaaaa_" + "b".repeat(43)})).status).toBe(401);
    const created = await newKey(["recipients:read"]);
    expect((await gw.call("GET", path, {key: created.key})).status).toBe(200);
    // Once a key has been accepted, the same id with another secret still is not.
    expect((await gw.call("GET", path, {key: `klx_${created.id}_${"b".repeat(43)}`})).status).toBe(401);
    expect((await gw.call("GET", path, {key: created.key})).status).toBe(200);
    expect((await gw.call("DELETE", `/api/v1/keys/${created.id}`)).status).toBe(204);
    const revoked = await gw.call("GET", path, {key: created.key});
    expect(revoked.status).toBe(401);
    expect(revoked.body.detail).toBe("the API key is unknown or revoked");
  });

  it("revoking one key leaves the others working", async () => {
    const a = await newKey(["recipients:read"], "a");
    const b = await newKey(["recipients:read"], "b");
    await gw.call("DELETE", `/api/v1/keys/${a.id}`);
    expect((await gw.call("GET", "/api/v1/recipients", {key: b.key})).status).toBe(200);
    expect((await gw.call("DELETE", "/api/v1/keys/zzzzzzzz")).status).toBe(404);
  });

  it("answers 403 when the key lacks the scope, naming it", async () => {
    const reader = await newKey(["notifications:read"]);
    const answer = await gw.call("POST", "/api/v1/notifications/send", {
      key: reader.key,
      body: {recipient_uuid: alice, message: "m", priority: "high"}
    });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toContain("notifications:send");
    expect((await gw.call("GET", "/api/v1/keys", {key: reader.key})).status).toBe(403);
    expect((await gw.call("GET", "/api/v1/audit", {key: reader.key})).status).toBe(403);
  });

  it("checks the scope of every endpoint", async () => {
    const sender = await newKey(["notifications:send"]);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      key: sender.key,
      body: {recipient_uuid: alice, message: "scoped", priority: "high"}
    });
    expect(sent.status).toBe(202);
    const id = sent.body.notification_uuid;
    expect((await gw.call("GET", `/api/v1/notifications/${id}`, {key: sender.key})).status).toBe(403);
    expect((await gw.call("POST", `/api/v1/notifications/${id}/ack`, {key: sender.key})).status).toBe(403);
    const acker = await newKey(["notifications:ack"]);
    expect((await gw.call("POST", `/api/v1/notifications/${id}/ack`, {key: acker.key})).status).toBe(200);
    const writer = await newKey(["recipients:write"]);
    expect(
      (await gw.call("POST", "/api/v1/recipients", {key: writer.key, body: {email: "x@example.com"}})).status
    ).toBe(201);
    expect((await gw.call("GET", "/api/v1/recipients", {key: writer.key})).status).toBe(403);
  });

  it("records when a key was last used", async () => {
    const created = await newKey(["recipients:read"], "used");
    await gw.call("GET", "/api/v1/recipients", {key: created.key});
    // Recording use is a background write to the config file, off the request path.
    await vi.waitFor(async () => {
      const listed = (await gw.call("GET", "/api/v1/keys")).body.items.find(
        (item: {id: string}) => item.id === created.id
      );
      expect(listed.last_used_at).toBe(new Date(clock.now()).toISOString());
    });
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After and RateLimit headers once a key's burst is spent, and refills", async () => {
    const created = await newKey(["recipients:read"], "busy");
    const answers = [];
    for (let i = 0; i < 51; i++) answers.push(await gw.call("GET", "/api/v1/recipients", {key: created.key}));
    expect(answers.slice(0, 50).every((answer) => answer.status === 200)).toBe(true);
    const limited = answers[50];
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(answers[0].headers.get("ratelimit-policy")).toBe('"per-key";q=50;w=50');
    expect(answers[0].headers.get("ratelimit")).toBe('"per-key";r=49;t=1');
    expect(limited.headers.get("ratelimit")).toBe('"per-key";r=0;t=1');
    clock.advance(1000);
    expect((await gw.call("GET", "/api/v1/recipients", {key: created.key})).status).toBe(200);
    expect((await gw.call("GET", "/api/v1/recipients", {key: created.key})).status).toBe(429);
  });

  it("limits each key on its own", async () => {
    const other = await newKey(["recipients:read"], "calm");
    expect((await gw.call("GET", "/api/v1/recipients", {key: other.key})).status).toBe(200);
  });

  it("throttles an address that keeps presenting wrong keys", async () => {
    const statuses = [];
    for (let i = 0; i < 7; i++)
      statuses.push(
        (await gw.call("GET", "/api/v1/recipients", {key: `klx_guess${String(i).padStart(3, "0")}_${"x".repeat(40)}`}))
          .status
      );
    expect(statuses.slice(0, 6).every((status) => status === 401)).toBe(true);
    expect(statuses[6]).toBe(429);
    // A valid key from the throttled address still passes: others' failures never refuse it.
    expect((await gw.call("GET", "/api/v1/recipients")).status).toBe(200);
    const another = `klx_guess100_${"x".repeat(40)}`;
    expect((await gw.call("GET", "/api/v1/recipients", {key: another})).status).toBe(429);
    clock.advance(60_000);
    expect((await gw.call("GET", "/api/v1/recipients", {key: another})).status).toBe(401);
  });
});
