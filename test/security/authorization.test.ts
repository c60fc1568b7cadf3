import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {injector} from "@tsed/di";
import {Platform} from "@tsed/platform-http";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {SCOPES, type Scope} from "../../src/domain/vocabulary.js";
import {signDelivery} from "../../src/lib/webhook-signing.js";

/**
 * Every route that takes an API key, with the scope it needs. The first test compares this table
 * and KEYLESS below with the routes Ts.ED actually registered, so a new route fails the suite
 * until someone decides who may call it.
 */
const SCOPE_OF: Record<string, Scope> = {
  "POST /api/v1/notifications/send": "notifications:send",
  "GET /api/v1/notifications": "notifications:read",
  "GET /api/v1/notifications/:id": "notifications:read",
  "POST /api/v1/notifications/:id/ack": "notifications:ack",
  "POST /api/v1/notifications/:id/resolve": "notifications:ack",
  "GET /api/v1/recipients": "recipients:read",
  "POST /api/v1/recipients": "recipients:write",
  "GET /api/v1/recipients/:uuid": "recipients:read",
  "PATCH /api/v1/recipients/:uuid": "recipients:write",
  "DELETE /api/v1/recipients/:uuid": "recipients:write",
  "POST /api/v1/recipients/:uuid/test": "recipients:write",
  "GET /api/v1/groups": "recipients:read",
  "POST /api/v1/groups": "recipients:write",
  "GET /api/v1/groups/:uuid": "recipients:read",
  "PATCH /api/v1/groups/:uuid": "recipients:write",
  "DELETE /api/v1/groups/:uuid": "recipients:write",
  "GET /api/v1/recipients/:uuid/ical": "recipients:read",
  "POST /api/v1/recipients/:uuid/ical-token/rotate": "recipients:write",
  "GET /api/v1/schedules": "recipients:read",
  "POST /api/v1/schedules": "recipients:write",
  "GET /api/v1/schedules/:uuid": "recipients:read",
  "PATCH /api/v1/schedules/:uuid": "recipients:write",
  "DELETE /api/v1/schedules/:uuid": "recipients:write",
  "POST /api/v1/schedules/:uuid/ical-token/rotate": "recipients:write",
  "GET /api/v1/schedules/:uuid/on-call": "recipients:read",
  "GET /api/v1/schedules/:uuid/shifts": "recipients:read",
  "GET /api/v1/schedules/:uuid/overrides": "recipients:read",
  "GET /api/v1/escalation-policies": "recipients:read",
  "POST /api/v1/escalation-policies": "recipients:write",
  "GET /api/v1/escalation-policies/:uuid": "recipients:read",
  "PATCH /api/v1/escalation-policies/:uuid": "recipients:write",
  "DELETE /api/v1/escalation-policies/:uuid": "recipients:write",
  "GET /api/v1/targets": "recipients:read",
  // A device CLI's send key resolves `--to NAME` before it sends.
  "GET /api/v1/targets/:ref": "notifications:send",
  // Renders what each channel would send; nothing is sent.
  "POST /api/v1/recipients/:uuid/preview": "recipients:read",
  "GET /api/v1/recipients/:uuid/preview/:file": "recipients:read",
  "POST /api/v1/schedules/:uuid/overrides": "recipients:write",
  "DELETE /api/v1/schedules/:uuid/overrides/:id": "recipients:write",
  "GET /api/v1/maintenance": "recipients:read",
  "POST /api/v1/maintenance": "recipients:write",
  "GET /api/v1/maintenance/:uuid": "recipients:read",
  "POST /api/v1/maintenance/:uuid/end": "recipients:write",
  "DELETE /api/v1/maintenance/:uuid": "recipients:write",
  "POST /api/v1/keys": "admin",
  "GET /api/v1/keys": "admin",
  "DELETE /api/v1/keys/:id": "admin",
  "GET /api/v1/audit": "admin",
  "GET /api/v1/users": "admin",
  "POST /api/v1/users": "admin",
  "GET /api/v1/users/:id": "admin",
  "PATCH /api/v1/users/:id": "admin",
  "POST /api/v1/users/:id/password": "admin",
  "DELETE /api/v1/users/:id": "admin",
  "GET /api/v1/webhooks": "admin",
  "POST /api/v1/webhooks": "admin",
  "GET /api/v1/webhooks/:id": "admin",
  "PATCH /api/v1/webhooks/:id": "admin",
  "DELETE /api/v1/webhooks/:id": "admin",
  "POST /api/v1/webhooks/:id/rotate-secret": "admin",
  "GET /api/v1/webhooks/:id/deliveries": "admin",
  "POST /api/v1/webhooks/:id/deliveries/:deliveryId/redeliver": "admin",
  "POST /api/v1/backups": "admin",
  "GET /api/v1/backups": "admin",
  "GET /api/v1/backups/:name": "admin",
  "GET /api/v1/heartbeats": "admin",
  "POST /api/v1/heartbeats": "admin",
  "GET /api/v1/heartbeats/:name": "admin",
  "PATCH /api/v1/heartbeats/:name": "admin",
  "DELETE /api/v1/heartbeats/:name": "admin",
  "POST /api/v1/heartbeats/:name/rotate-ping-url": "admin",
  "POST /api/v1/heartbeats/:name/pause": "admin",
  "POST /api/v1/heartbeats/:name/resume": "admin",
  "POST /api/v1/heartbeats/:name/ping": "notifications:send",
  "GET /api/v1/integrations": "admin",
  "POST /api/v1/integrations": "admin",
  "GET /api/v1/integrations/:id": "admin",
  "PATCH /api/v1/integrations/:id": "admin",
  "DELETE /api/v1/integrations/:id": "admin",
  "GET /api/v1/integrations/:id/log": "admin",
  "POST /api/v1/integrations/:id/rotate-credentials": "admin",
  "POST /api/v1/integrations/:id/read": "admin",
  // Also takes the integration's signature or URL token instead of a key: see the keyless checks.
  "POST /api/v1/integrations/:id/events": "notifications:send"
};

/** The routes that need no API key, each with why; their own credentials are checked below. */
const KEYLESS: Record<string, string> = {
  "GET /healthz": "liveness probe",
  "GET /readyz": "readiness probe; shows states, never secrets",
  "GET /metrics": "Prometheus scrape; counts only",
  "GET /problems/:code": "the documentation page of an error code",
  "GET /api/v1/openapi.json": "the public API document",
  "GET /": "redirect to the dashboard",
  "GET /ack/:token": "emailed acknowledge link: the signed token is the credential",
  "POST /ack/:token": "emailed acknowledge link: the signed token is the credential",
  "GET /ping/:token": "heartbeat ping URL: the token is the credential",
  "HEAD /ping/:token": "heartbeat ping URL",
  "POST /ping/:token": "heartbeat ping URL",
  "GET /ping/:token/start": "heartbeat ping URL",
  "HEAD /ping/:token/start": "heartbeat ping URL",
  "POST /ping/:token/start": "heartbeat ping URL",
  "GET /ping/:token/fail": "heartbeat ping URL",
  "HEAD /ping/:token/fail": "heartbeat ping URL",
  "POST /ping/:token/fail": "heartbeat ping URL",
  "GET /ical/:file": "calendar feed URL: the token in the file name is the credential",
  "GET /api/v1/replication/takeover":
    "box to box: the pair's box token (from the shared ack-link key) is the credential",
  "POST /api/v1/replication/tail": "box to box: the pair's box token (from the shared ack-link key) is the credential",
  "GET /dashboard/api/session": "tells the sign-in page what to show; no data",
  "GET /dashboard/api/vocabulary.js":
    "the words the page offers (priorities, scopes, event types); public in the API document too",
  "POST /dashboard/api/password": "needs an admin API key in the body",
  "POST /dashboard/api/sign-in": "a user's name and password",
  "POST /dashboard/api/sign-out": "needs a session",
  "GET /dashboard/api/events": "needs a session",
  "POST /dashboard/api/notifications/:id/ack": "needs a session"
};

const NON_ADMIN_SCOPES = SCOPES.filter((scope) => scope !== "admin");

let gw: TestGateway;
let registered: string[];
// One key per non-admin scope, and one holding all of them (which still is not admin).
const keyWith = new Map<Scope, string>();
let allButAdmin: string;

async function createKey(scopes: readonly string[]): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/keys", {body: {name: scopes.join("+"), scopes}});
  expect(answer.status).toBe(201);
  return answer.body.key;
}

beforeAll(async () => {
  // Hundreds of refusals from one address on purpose: the address throttle is brute-force.test.ts's subject.
  gw = await startTestGateway({
    rate_limit: {per_second: 1_000_000, burst: 1_000_000, auth_failures_per_minute: 1_000_000}
  });
  registered = injector()
    .get<Platform>(Platform)
    .getLayers()
    .filter((layer) => layer.isProvider())
    .map((layer) => `${layer.method.toUpperCase()} ${String(layer.path)}`);
  for (const scope of NON_ADMIN_SCOPES) keyWith.set(scope, await createKey([scope]));
  allButAdmin = await createKey(NON_ADMIN_SCOPES);
});
afterAll(() => gw?.stop());

/** A concrete path for a route template; the ids name nothing, which no auth check may depend on. */
function concrete(template: string): string {
  return template.replace(/:(\w+)/g, (_, name: string) => (name === "deliveryId" ? "1" : `no-such-${name}`));
}

function request(route: string, key: string | null, headers: Record<string, string> = {}) {
  const [method, template] = route.split(" ");
  const sendsBody = ["POST", "PATCH"].includes(method);
  return gw.call(method, concrete(template), {key, headers, ...(sendsBody ? {body: {}} : {})});
}

describe("the authorisation table", () => {
  it("covers exactly the routes the gateway registered", () => {
    expect(registered.length).toBeGreaterThan(60);
    expect([...registered].sort()).toEqual([...Object.keys(SCOPE_OF), ...Object.keys(KEYLESS)].sort());
  });

  it("documents the same scope in the OpenAPI document for every keyed route it lists", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body;
    for (const route of Object.keys(SCOPE_OF)) {
      const [method, template] = route.split(" ");
      const operation = spec.paths[template.replace(/:(\w+)/g, "{$1}")]?.[method.toLowerCase()];
      expect(operation?.security, route).toEqual([{api_key: []}]);
      expect(operation.responses["401"], route).toBeDefined();
      expect(operation.responses["403"].description, route).toContain(SCOPE_OF[route]);
    }
  });
});

describe.each(Object.entries(SCOPE_OF))("%s (scope %s)", (route, scope) => {
  it("answers 401 without a key and with an unknown key", async () => {
    for (const key of [null, `klx_zzzzzzzz_${"x".repeat(43)}`]) {
      const answer = await request(route, key);
      expect(answer.status, `${route} with ${key ?? "no key"}`).toBe(401);
      expect(answer.body.code).toBe("unauthenticated");
    }
  });

  it("answers 403 naming the scope to every key that lacks it", async () => {
    const lacking =
      scope === "admin"
        ? [allButAdmin]
        : NON_ADMIN_SCOPES.filter((other) => other !== scope).map((other) => keyWith.get(other)!);
    for (const key of lacking) {
      const answer = await request(route, key);
      expect(answer.status, route).toBe(403);
      expect(answer.body).toMatchObject({code: "forbidden"});
      expect(answer.body.detail).toContain(`"${scope}"`);
    }
  });

  it("lets a key with the scope past authorisation, and the admin key too", async () => {
    for (const key of [scope === "admin" ? gw.adminKey : keyWith.get(scope)!, gw.adminKey]) {
      const answer = await request(route, key);
      expect([401, 403], `${route}: ${answer.status} ${JSON.stringify(answer.body)}`).not.toContain(answer.status);
    }
  });
});

describe("the keyless routes check their own credentials", () => {
  it("serves the probes, metrics, error pages and the API document to anyone, without secrets", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics", "/problems/unauthenticated", "/api/v1/openapi.json"]) {
      const answer = await gw.call("GET", path, {key: null});
      expect(answer.status, path).toBe(200);
      expect(JSON.stringify(answer.body), path).not.toContain(gw.adminKey);
    }
    const entry = await fetch(`${gw.url}/`, {redirect: "manual"});
    expect(entry.status).toBe(302);
    expect(entry.headers.get("location")).toBe("/dashboard/");
    // The dashboard's static files are the page's own code: public, like any web app's.
    const page = await fetch(`${gw.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(gw.adminKey);
  });

  it("refuses a forged acknowledge link on both methods", async () => {
    for (const method of ["GET", "POST"]) {
      const answer = await gw.call(method, "/ack/v1.notif_forged.AAAAAAAAAAAAAAAAAAAAAA", {key: null});
      expect(answer.status, method).toBe(403);
      expect(String(answer.body)).toContain("<html");
    }
  });

  it("refuses an unknown ping token on every ping route", async () => {
    for (const route of Object.keys(KEYLESS).filter((route) => route.includes("/ping/"))) {
      const [method, template] = route.split(" ");
      const answer = await gw.call(method, template.replace(":token", "hb_guessed0000000000000000"), {key: null});
      expect(answer.status, route).toBe(404);
    }
  });

  it("refuses an unknown calendar feed token", async () => {
    for (const file of ["guessed000000000000000000000000.ics", "no-suffix"]) {
      const answer = await gw.call("GET", `/ical/${file}`, {key: null});
      expect(answer.status, file).toBe(404);
      expect(answer.body.code).toBe("not_found");
    }
  });

  it("refuses an integration event with a bad signature, a wrong URL token or no credential", async () => {
    const recipient = await createRecipient(gw);
    const created = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "plc", kind: "generic", target: recipient}
    });
    expect(created.status).toBe(201);
    const {id, url} = created.body as {id: string; url: string};
    const path = `/api/v1/integrations/${id}/events`;
    const body = {alert_id: "a", action: "fire", title: "t"};
    const forged = {
      ...signDelivery(
        {secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`},
        "msg_1",
        Date.now(),
        JSON.stringify(body)
      )
    };
    const attempts = [
      {name: "no credential", path, headers: {}},
      {name: "another secret's signature", path, headers: forged},
      {name: "a wrong URL token", path: `${path}?token=wrong-token-000000000000`, headers: {}}
    ];
    for (const attempt of attempts) {
      const answer = await gw.call("POST", attempt.path, {key: null, body, headers: attempt.headers});
      expect(answer.status, attempt.name).toBe(401);
    }
    // The real URL token works, so the refusals above are about the credential.
    expect((await gw.call("POST", new URL(url).pathname + new URL(url).search, {key: null, body})).status).toBe(202);
  });

  it("keeps the dashboard's routes behind its password and session", async () => {
    const session = await gw.call("GET", "/dashboard/api/session", {key: null});
    expect(session.body).toMatchObject({signed_in: false, csrf_token: null});
    const notAdmin = await gw.call("POST", "/dashboard/api/password", {
      key: null,
      body: {admin_key: keyWith.get("notifications:read"), password: "a long enough password"}
    });
    expect(notAdmin.status).toBe(401);
    expect(
      (
        await gw.call("POST", "/dashboard/api/password", {
          key: null,
          body: {admin_key: gw.adminKey, password: "the right long password"}
        })
      ).status
    ).toBe(204);
    expect(
      (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: "a wrong long password"}})).status
    ).toBe(401);
    for (const route of [
      "POST /dashboard/api/sign-out",
      "GET /dashboard/api/events",
      "POST /dashboard/api/notifications/:id/ack"
    ]) {
      const answer = await request(route, null);
      expect(answer.status, route).toBe(401);
    }
  });
});

describe("Authorization: Bearer <key>, taken wherever X-API-Key is", () => {
  const bearer = (key: string) => ({Authorization: `Bearer ${key}`});
  // What must not depend on the header the key came in: the status, the problem's code and the rate-limit policy.
  const answerOf = (answer: {status: number; headers: Headers; body: any}) => ({
    status: answer.status,
    code: answer.body?.code,
    policy: answer.headers.get("ratelimit-policy")
  });

  it.each(Object.entries(SCOPE_OF))("%s answers the same to either header", async (route, scope) => {
    const lacking = scope === "admin" ? allButAdmin : keyWith.get(NON_ADMIN_SCOPES.find((other) => other !== scope)!)!;
    for (const key of [`klx_zzzzzzzz_${"x".repeat(43)}`, lacking, gw.adminKey]) {
      const viaHeader = answerOf(await request(route, key));
      expect(answerOf(await request(route, null, bearer(key))), `${route}, ${viaHeader.status}`).toEqual(viaHeader);
      // Both headers at once, with the same key, are that key.
      expect(answerOf(await request(route, key, bearer(key))), route).toEqual(viaHeader);
    }
  });

  it("opens /readyz's details as X-API-Key does", async () => {
    const details = await gw.call("GET", "/readyz", {key: null, headers: bearer(gw.adminKey)});
    expect(details.body).toHaveProperty("replication");
  });

  it("refuses an Authorization header that is no Bearer key, in words, and different keys in the two headers", async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ["Basic credentials", {Authorization: "Basic YWRtaW46YWRtaW4="}, 'must be "Bearer <API key>"'],
      ["a bare Bearer", {Authorization: "Bearer"}, 'must be "Bearer <API key>"'],
      ["two keys", {...bearer(gw.adminKey), "X-API-Key": keyWith.get("notifications:read")!}, "different keys"]
    ];
    for (const [name, headers, words] of cases) {
      const answer = await gw.call("GET", "/api/v1/notifications", {key: null, headers});
      expect(answer.status, name).toBe(401);
      expect(answer.body.code, name).toBe("unauthenticated");
      expect(answer.body.detail, name).toContain(words);
    }
    const none = await gw.call("GET", "/api/v1/notifications", {key: null});
    expect(none.body.detail).toContain("Authorization: Bearer");
  });
});
