import http from "node:http";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {DASHBOARD_ASSETS} from "../../src/dashboard/assets.js";
import {CHANNELS, EVENT_TYPES, NOTIFICATION_STATUSES, PRIORITIES, SCOPES} from "../../src/domain/vocabulary.js";
import {ROLES} from "../../src/domain/roles.js";
import {ADMIN_PASSWORD, cookieOf, setAdminPassword, signIn} from "./support/dashboard-client.js";

/** A sign-in sent from another loopback address (127.0.0.0/8 is all this host's), as from another machine. */
function signInFrom(url: string, localAddress: string, body: unknown): Promise<{status: number; body: any}> {
  const {hostname, port} = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: hostname,
        port,
        localAddress,
        method: "POST",
        path: "/dashboard/api/sign-in",
        headers: {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload)}
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        response.on("end", () => resolve({status: response.statusCode ?? 0, body: JSON.parse(text || "null")}));
      }
    );
    request.on("error", reject);
    request.end(payload);
  });
}

let gw: TestGateway;
// Sign-in limits are measured on this clock: each test starts with full buckets, and no test sleeps.
const clock = new ManualClock(Date.UTC(2026, 10, 22, 8, 0, 0));

beforeAll(async () => {
  gw = await startTestGateway({dashboard: {session_hours: 12, sign_in_attempts_per_minute: 5}}, {clock});
});
beforeEach(() => clock.advance(3600_000));
afterAll(() => gw.stop());

async function nonAdminKey(): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["notifications:read"]}});
  return answer.body.key;
}

describe("setting the admin password", () => {
  it("starts with no password and refuses sign-in until one is set", async () => {
    const status = await gw.call("GET", "/dashboard/api/session", {key: null});
    expect(status.body).toEqual({
      password_set: false,
      signed_in: false,
      csrf_token: null,
      expires_at: null,
      user: null
    });
    const refused = await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: "anything at all"}});
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("no user exists yet");
  });

  it("refuses a key that is not an admin key, a short password and unknown fields, storing nothing", async () => {
    const notAdmin = await setAdminPassword(gw, ADMIN_PASSWORD, await nonAdminKey());
    expect(notAdmin.status).toBe(401);
    expect(notAdmin.body.errors).toEqual([{pointer: "/admin_key", detail: "not an active admin API key"}]);
    const short = await setAdminPassword(gw, "short");
    expect(short.status).toBe(400);
    expect(short.body.errors[0]).toMatchObject({pointer: "/password"});
    expect(short.body.errors[0].detail).toContain("10");
    const extra = await gw.call("POST", "/dashboard/api/password", {
      key: null,
      body: {admin_key: gw.adminKey, password: ADMIN_PASSWORD, user: "root"}
    });
    expect(extra.status).toBe(400);
    expect((await gw.call("GET", "/dashboard/api/session", {key: null})).body.password_set).toBe(false);
  });

  it("sets it with the initial admin key and stores only a scrypt hash", async () => {
    const answer = await setAdminPassword(gw);
    expect(answer.status).toBe(204);
    expect((await gw.call("GET", "/dashboard/api/session", {key: null})).body.password_set).toBe(true);
    const config = readFileSync(join(gw.dataDir, "config.json"), "utf8");
    expect(config).not.toContain(ADMIN_PASSWORD);
    expect(JSON.parse(config).dashboard_users[0].password_hash).toMatch(
      /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/
    );
    // The first run's password makes the first admin, named "admin" when the request names nobody.
    const audit = await gw.call("GET", "/api/v1/audit?action=user.created");
    expect(audit.body.items[0]).toMatchObject({
      actor: {type: "api_key", id: gw.adminKey.split("_")[1], name: "initial admin"},
      detail: {name: "admin", role: "admin"}
    });
  });
});

describe("sessions", () => {
  it("signs in with a cookie that scripts cannot read and other sites cannot send", async () => {
    const answer = await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: ADMIN_PASSWORD}});
    expect(answer.status).toBe(200);
    const cookie = answer.headers.get("set-cookie") as string;
    expect(cookie).toMatch(/^klaxon_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(answer.body).toEqual({
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: new Date(clock.now() + 12 * 3600_000).toISOString(),
      user: {id: expect.stringMatching(/^usr_/), name: "admin", role: "admin"}
    });
    const status = await gw.call("GET", "/dashboard/api/session", {
      key: null,
      headers: {Cookie: cookieOf(answer.headers)}
    });
    expect(status.body).toMatchObject({signed_in: true, csrf_token: answer.body.csrf_token});
  });

  it("marks the cookie Secure when a proxy on the box says the page came over https", async () => {
    const answer = await gw.call("POST", "/dashboard/api/sign-in", {
      key: null,
      body: {password: ADMIN_PASSWORD},
      headers: {"X-Forwarded-Proto": "https"}
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("set-cookie")).toMatch(
      /^klaxon_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/
    );
    const out = await gw.call("POST", "/dashboard/api/sign-out", {
      key: null,
      headers: {Cookie: cookieOf(answer.headers), "X-CSRF-Token": answer.body.csrf_token, "X-Forwarded-Proto": "https"}
    });
    expect(out.headers.get("set-cookie")).toMatch(/; Secure$/);
  });

  it("refuses a wrong password without saying more", async () => {
    const answer = await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: "wrong password!"}});
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({
      code: "unauthenticated",
      errors: [{pointer: "/password", detail: "wrong name or password"}]
    });
    expect(answer.headers.get("set-cookie")).toBeNull();
  });

  it("lets the session use the API as admin; reads need no CSRF token", async () => {
    const dashboard = await signIn(gw);
    const list = await dashboard.call("GET", "/api/v1/recipients", {csrf: null});
    expect(list.status).toBe(200);
    expect(list.headers.get("ratelimit-policy")).toBeTruthy();
    expect((await dashboard.call("GET", "/api/v1/keys", {csrf: null})).status).toBe(200);
  });

  it("refuses a state change without the CSRF token, or with another session's, and changes nothing", async () => {
    const dashboard = await signIn(gw);
    const other = await signIn(gw);
    const before = (await gw.call("GET", "/api/v1/recipients?limit=200")).body.items.length;
    for (const csrf of [null, other.csrfToken, ""]) {
      const answer = await dashboard.call("POST", "/api/v1/recipients", {
        body: {name: "Mallory", email: "m@example.com"},
        csrf
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({code: "csrf_token_invalid", type: "/problems/csrf_token_invalid"});
    }
    expect((await gw.call("GET", "/api/v1/recipients?limit=200")).body.items.length).toBe(before);
    const created = await dashboard.call("POST", "/api/v1/recipients", {
      body: {name: "Maria", email: "maria@factory.lan"}
    });
    expect(created.status).toBe(201);
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${created.body.uuid}`);
    expect(audit.body.items[0]).toMatchObject({action: "recipient.created", actor: {type: "dashboard", name: "admin"}});
  });

  it("keeps the key path as it was: a key wins over a cookie, a bad key is refused even with a good cookie", async () => {
    const dashboard = await signIn(gw);
    const reader = await nonAdminKey();
    const withKey = await gw.call("GET", "/api/v1/keys", {key: reader, headers: {Cookie: dashboard.cookie}});
    expect(withKey.status).toBe(403);
    const badKey = await gw.call("GET", "/api/v1/recipients", {
      key: "klx_aaaaaaaa_" + "b".repeat(43),
      headers: {Cookie: dashboard.cookie}
    });
    expect(badKey.status).toBe(401);
  });

  it("refuses signed-out access to the API and to the dashboard's own endpoints", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/notifications"],
      ["GET", "/dashboard/api/events"],
      ["POST", "/dashboard/api/sign-out"],
      ["POST", "/dashboard/api/notifications/notif_x/ack"]
    ]) {
      const answer = await gw.call(method, path, {key: null, headers: {Cookie: "klaxon_session=forged-token"}});
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.body.code).toBe("unauthenticated");
    }
  });

  it("signs out: the cookie is cleared and stops working", async () => {
    const dashboard = await signIn(gw);
    expect((await dashboard.call("POST", "/dashboard/api/sign-out", {csrf: null})).status).toBe(403);
    const out = await dashboard.call("POST", "/dashboard/api/sign-out");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^klaxon_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
    expect((await dashboard.call("GET", "/api/v1/recipients")).status).toBe(401);
    const audit = await gw.call("GET", "/api/v1/audit?action=dashboard.signed_out");
    expect(audit.body.items.length).toBeGreaterThan(0);
  });

  it("ends a session when its time is up", async () => {
    const dashboard = await signIn(gw);
    clock.advance(12 * 3600_000 - 1);
    expect((await dashboard.call("GET", "/api/v1/recipients")).status).toBe(200);
    clock.advance(1);
    expect((await dashboard.call("GET", "/api/v1/recipients")).status).toBe(401);
  });

  it("rate-limits guesses at one user's password spread over many addresses, and no other user", async () => {
    const from = (address: string, name: string, password: string) =>
      signInFrom(gw.url, address, {name, password}).then((answer) => answer.status);
    // Five addresses, one guess each: no address is spent, but the user's own budget is.
    for (let i = 0; i < 5; i++) expect(await from(`127.0.0.${10 + i}`, "admin", `guess number ${i}`)).toBe(401);
    const refused = await signInFrom(gw.url, "127.0.0.20", {name: "ADMIN", password: ADMIN_PASSWORD});
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain("too many sign-in attempts for this user");
    expect(await from("127.0.0.20", "somebody else", "a guess at them")).toBe(401);
    clock.advance(60_000);
    expect(await from("127.0.0.21", "admin", ADMIN_PASSWORD)).toBe(200);
  });

  it("rate-limits sign-in attempts per address, then lets them through again", async () => {
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: `guess number ${i}`}}));
    expect(answers.slice(0, 5).map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
    expect(answers[5].status).toBe(429);
    expect(answers[5].body.code).toBe("rate_limited");
    expect(Number(answers[5].headers.get("retry-after"))).toBeGreaterThan(0);
    // The right password is throttled too: the limit is on attempts, so parallel guesses cannot slip past the slow hash.
    expect(
      (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: ADMIN_PASSWORD}})).status
    ).toBe(429);
    clock.advance(60_000);
    await signIn(gw);
  });

  it("signs every browser out when the password is reset with an admin key", async () => {
    const dashboard = await signIn(gw);
    expect((await setAdminPassword(gw, "a brand new passphrase")).status).toBe(204);
    expect((await dashboard.call("GET", "/api/v1/recipients")).status).toBe(401);
    expect(
      (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: ADMIN_PASSWORD}})).status
    ).toBe(401);
    await signIn(gw, "a brand new passphrase");
    await setAdminPassword(gw);
  });

  it("never writes the password, the session token or the CSRF token to the log", async () => {
    const dashboard = await signIn(gw);
    await dashboard.call("GET", "/api/v1/recipients");
    const log = gw.logLines.join("\n");
    expect(log).not.toContain(ADMIN_PASSWORD);
    expect(log).not.toContain(dashboard.cookie.split("=")[1]);
    expect(log).not.toContain(dashboard.csrfToken);
  });
});

describe("acknowledging and the live stream", () => {
  it("acknowledges as the signed-in user (not whoever the body names) and tells open streams what changed", async () => {
    const dashboard = await signIn(gw);
    const stream = await fetch(`${gw.url}/dashboard/api/events`, {headers: {Cookie: dashboard.cookie}});
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    const alice = await createRecipient(gw);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: alice, message: "Press 7 oil temperature", priority: "high"}
    });
    const id = sent.body.notification_uuid;
    let received = "";
    while (!received.includes(`"notification_id":"${id}"`)) received += (await reader.read()).value;
    expect(received).toMatch(
      new RegExp(`event: change\\ndata: \\{"seq":\\d+,"type":"escalation.started","notification_id":"${id}"\\}`)
    );

    expect((await dashboard.call("POST", `/dashboard/api/notifications/${id}/ack`, {csrf: null})).status).toBe(403);
    const acked = await dashboard.call("POST", `/dashboard/api/notifications/${id}/ack`, {body: {by: "Maria"}});
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({status: "acknowledged", acknowledged_by: "admin", acknowledged_via: "dashboard"});
    while (!received.includes('"type":"notification.acknowledged"')) received += (await reader.read()).value;
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.acknowledged`);
    expect(audit.body.items[0]).toMatchObject({
      actor: {type: "dashboard", name: "admin"},
      detail: {via: "dashboard", by: "admin"}
    });
    await reader.cancel();
  });

  it("closes an open stream when its session is signed out", async () => {
    const dashboard = await signIn(gw);
    const stream = await fetch(`${gw.url}/dashboard/api/events`, {headers: {Cookie: dashboard.cookie}});
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    await dashboard.call("POST", "/dashboard/api/sign-out");
    let received = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += chunk.value;
    expect(received).toContain("event: signed_out");
  });
});

describe("pages and readiness", () => {
  it("sends a browser at / to the dashboard, served from the box with a strict content policy", async () => {
    const root = await fetch(`${gw.url}/`, {redirect: "manual"});
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard/");
    const page = await fetch(`${gw.url}/dashboard/`);
    expect(page.status).toBe(200);
    const policy = page.headers.get("content-security-policy");
    expect(policy).toContain("default-src 'self'");
    // Inline is allowed for style attributes alone (the mail preview), never for script or <style>.
    expect(policy).not.toMatch(/(default-src|script-src|style-src(-elem)?) [^;]*'unsafe-inline'/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ["app.js", "style.css"]) expect((await fetch(`${gw.url}/dashboard/${asset}`)).status).toBe(200);
  });

  it("reports the data directory's free disk space on /readyz", async () => {
    const ready = await gw.call("GET", "/readyz");
    expect(ready.body.disk).toMatchObject({path: gw.dataDir, error: null});
    expect(ready.body.disk.free_bytes).toBeGreaterThan(0);
    expect(ready.body.disk.total_bytes).toBeGreaterThanOrEqual(ready.body.disk.free_bytes);
  });
});

describe("the page's vocabulary", () => {
  it("is the domain's own, served as a module without a session, and the page's script holds no copy", async () => {
    const response = await fetch(`${gw.url}/dashboard/api/vocabulary.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const served = (await import(`data:text/javascript,${encodeURIComponent(await response.text())}`)) as {
      VOCABULARY: Record<string, unknown>;
    };
    expect(served.VOCABULARY).toEqual({
      channels: [...CHANNELS],
      priorities: [...PRIORITIES],
      statuses: [...NOTIFICATION_STATUSES],
      scopes: [...SCOPES],
      roles: [...ROLES],
      event_types: [...EVENT_TYPES]
    });
    const format = readFileSync(join(DASHBOARD_ASSETS, "lib", "format.js"), "utf8");
    for (const word of [...EVENT_TYPES, ...SCOPES]) expect(format).not.toContain(`"${word}"`);
  });
});
