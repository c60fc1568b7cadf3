import {afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ensureKlaxonAdmin, runKlaxonAdmin} from "./support/klaxon-admin.js";
import {startFlakyProxy, type FlakyProxy} from "./support/flaky-proxy.js";

let gw: TestGateway;
let proxy: FlakyProxy;
let alice: string;

beforeAll(async () => {
  await ensureKlaxonAdmin();
  gw = await startTestGateway();
  proxy = await startFlakyProxy(gw.url);
  alice = await createRecipient(gw);
}, 120_000);
afterAll(async () => {
  await proxy.close();
  await gw.stop();
});
beforeEach(() => {
  proxy.seen.length = 0;
});

const klaxonAdmin = (...args: string[]) => runKlaxonAdmin(args, {KLAXON_URL: proxy.url, KLAXON_API_KEY: gw.adminKey});
const unavailable = {
  status: 503,
  headers: {"Retry-After": "1"},
  body: {
    type: "/problems/storage_unavailable",
    title: "Storage unavailable",
    status: 503,
    code: "storage_unavailable",
    detail: "disk full"
  }
};
const internal = {status: 500, body: {title: "Internal error", status: 500, code: "internal_error"}};

async function notificationsWithMessage(message: string): Promise<Array<{id: string}>> {
  const page = await gw.call("GET", "/api/v1/notifications?limit=200");
  return page.body.items.filter((n: {message: string}) => n.message === message);
}

describe("retries", () => {
  it("repeats a send after a 503 with the same Idempotency-Key, and pages once", async () => {
    proxy.script(unavailable);
    const run = await klaxonAdmin("send", "--to", alice, "--priority", "critical", "--json", "retry after 503");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("retrying");
    const sends = proxy.seen.filter((request) => request.path === "/api/v1/notifications/send");
    expect(sends).toHaveLength(2);
    expect(sends[0].headers["idempotency-key"]).toMatch(/^klaxon-cli-/);
    expect(sends[1].headers["idempotency-key"]).toBe(sends[0].headers["idempotency-key"]);
    expect(sends[1].body).toBe(sends[0].body);
    expect(await notificationsWithMessage("retry after 503")).toEqual([
      expect.objectContaining({id: JSON.parse(run.stdout).notification_uuid})
    ]);
  });

  it("gets the first answer replayed when the connection dropped after the gateway stored the send", async () => {
    // The first attempt reaches the gateway, but its answer is lost: the retry must not page again.
    proxy.script("forward", "drop");
    const body = {recipient_uuid: alice, message: "lost answer", priority: "high"};
    const direct = await fetch(proxy.url + "/api/v1/notifications/send", {
      method: "POST",
      headers: {"X-API-Key": gw.adminKey, "Content-Type": "application/json", "Idempotency-Key": "lost-answer-1"},
      body: JSON.stringify(body)
    });
    expect(direct.status).toBe(202);
    const run = await klaxonAdmin(
      "send",
      "--to",
      alice,
      "--priority",
      "high",
      "--idempotency-key",
      "lost-answer-1",
      "lost answer"
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("replayed");
    expect(proxy.seen.filter((request) => request.path === "/api/v1/notifications/send")).toHaveLength(3);
    expect(await notificationsWithMessage("lost answer")).toHaveLength(1);
  });

  it("honours Retry-After on 429 and then succeeds", async () => {
    proxy.script({
      status: 429,
      headers: {"Retry-After": "1"},
      body: {title: "Too many requests", status: 429, code: "rate_limited"}
    });
    const run = await klaxonAdmin("list", "--json");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/retrying in 1\.\d s \(attempt 2 of 4\): 429/);
    expect(proxy.seen).toHaveLength(2);
  });

  it("gives up with exit 5 after the retries run out", async () => {
    proxy.script(internal, internal, internal);
    const run = await klaxonAdmin("get", "notif_00000000000000000000000000", "--retries", "2");
    expect(run.code).toBe(5);
    expect(proxy.seen).toHaveLength(3);
    expect(run.stderr).toContain("error: 500 Internal error");
  });

  it("does not wait for a Retry-After longer than a minute", async () => {
    proxy.script({...unavailable, headers: {"Retry-After": "3600"}});
    const run = await klaxonAdmin("list");
    expect(run.code).toBe(5);
    expect(run.stderr).toContain("retry after 3600 s");
    expect(proxy.seen).toHaveLength(1);
  });

  it("does not repeat a create after an error that may have stored it, but does after 503", async () => {
    proxy.script(internal);
    const failed = await klaxonAdmin("recipients", "create", "--name", "Carol", "--email", "carol@factory.lan");
    expect(failed.code).toBe(5);
    expect(proxy.seen).toHaveLength(1);

    proxy.seen.length = 0;
    proxy.script(unavailable);
    const created = await klaxonAdmin(
      "recipients",
      "create",
      "--name",
      "Dave",
      "--email",
      "dave@factory.lan",
      "--json"
    );
    expect(created.code, created.stderr).toBe(0);
    expect(proxy.seen).toHaveLength(2);
  });

  it("repeats after a dropped connection and reports an unreachable gateway with exit 5", async () => {
    proxy.script("drop");
    const run = await klaxonAdmin("send", "--to", alice, "--priority", "high", "after a reset");
    expect(run.code, run.stderr).toBe(0);
    const sends = proxy.seen.filter((request) => request.path === "/api/v1/notifications/send");
    expect(sends.map((request) => request.headers["idempotency-key"])).toEqual([
      sends[0].headers["idempotency-key"],
      sends[0].headers["idempotency-key"]
    ]);
    expect(await notificationsWithMessage("after a reset")).toHaveLength(1);

    const nobody = await runKlaxonAdmin(["list", "--retries", "1"], {
      KLAXON_URL: "http://127.0.0.1:39999",
      KLAXON_API_KEY: gw.adminKey
    });
    expect(nobody.code).toBe(5);
    expect(nobody.stderr).toContain("ECONNREFUSED");
    expect(nobody.stderr).not.toContain(gw.adminKey);
  });
});
