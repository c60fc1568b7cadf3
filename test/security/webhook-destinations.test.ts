import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startTestGateway, type TestGateway} from "../support/gateway.js";

// Issue 18 item 6: a URL with credentials can never deliver and would spread its password; link-local
// and unspecified destinations reach cloud metadata services or the box itself.
const PASSWORD = "hunter2-9f8e7d6c";

const create = (gw: TestGateway, url: string) => gw.call("POST", "/api/v1/webhooks", {body: {url, events: ["*"]}});

const LINK_LOCAL_OR_UNSPECIFIED = [
  "http://169.254.169.254/latest/meta-data",
  "http://169.254.0.1:8080/hook",
  "http://0.0.0.0:9000/hook",
  "http://0/hook",
  "http://0.1.2.3/hook",
  "http://[::]/hook",
  "http://[fe80::1]/hook",
  "http://[febf::ffff]/hook",
  "http://[::ffff:169.254.169.254]/hook",
  "http://[::ffff:0.0.0.0]/hook"
];

// One gateway at a time: the framework's injector is one per process.
describe("webhook destinations", () => {
  let strict: TestGateway;
  beforeAll(async () => {
    strict = await startTestGateway();
  });
  afterAll(() => strict.stop());

  it.each([`http://ops:${PASSWORD}@factory.lan/hook`, `https://ops@factory.lan/hook`])(
    "refuses credentials in %s with 400 and writes the password nowhere",
    async (url) => {
      const answer = await create(strict, url);
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([{pointer: "/url", detail: expect.stringMatching(/user name or password/)}]);
      expect(JSON.stringify(answer.body)).not.toContain(PASSWORD);
      expect(strict.logLines.join("\n")).not.toContain(PASSWORD);
      const audit = await strict.call("GET", "/api/v1/audit?limit=200");
      expect(JSON.stringify(audit.body)).not.toContain(PASSWORD);
      expect((await strict.call("GET", "/api/v1/webhooks")).body.items).toEqual([]);
    }
  );

  it.each(LINK_LOCAL_OR_UNSPECIFIED)("refuses %s by default", async (url) => {
    const answer = await create(strict, url);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      {pointer: "/url", detail: expect.stringMatching(/link-local or unspecified.*webhooks\.allow_link_local/)}
    ]);
  });

  it("refuses a patch that moves a subscription to a link-local address", async () => {
    const {id} = (await create(strict, "http://127.0.0.1:9/hook")).body;
    const patched = await strict.call("PATCH", `/api/v1/webhooks/${id}`, {
      body: {url: "http://169.254.169.254/"},
      headers: {"Content-Type": "application/merge-patch+json"}
    });
    expect(patched.status).toBe(400);
    expect((await strict.call("GET", `/api/v1/webhooks/${id}`)).body.url).toBe("http://127.0.0.1:9/hook");
  });

  it.each([
    "http://127.0.0.1:9/hook",
    "http://[::1]:9/hook",
    "http://10.0.0.5/hook",
    "http://[fec0::1]/hook",
    "https://hooks.factory.lan/x"
  ])("accepts %s", async (url) => {
    expect((await create(strict, url)).status).toBe(201);
  });
});

describe("webhook destinations with webhooks.allow_link_local on", () => {
  let allowing: TestGateway;
  beforeAll(async () => {
    allowing = await startTestGateway({webhooks: {allow_link_local: true}});
  });
  afterAll(() => allowing.stop());

  it("accepts link-local and unspecified addresses, but never credentials", async () => {
    for (const url of LINK_LOCAL_OR_UNSPECIFIED) expect((await create(allowing, url)).status).toBe(201);
    expect((await create(allowing, `http://ops:${PASSWORD}@169.254.0.1/hook`)).status).toBe(400);
  });
});
