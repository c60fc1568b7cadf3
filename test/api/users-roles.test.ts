import {execFileSync} from "node:child_process";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Browser} from "playwright-core";
import {systemClock} from "../../src/lib/clock.js";
import {startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "../support/webhook-receiver.js";
import {eventually} from "../support/eventually.js";
import {signIn, type DashboardClient} from "../dashboard/support/dashboard-client.js";
import {checkPage, DESKTOP, launchChromium, openContext, signInThroughPage} from "../dashboard/support/browser.js";

// A data dir made by the release before named users (main at 837ee22: the admin password set,
// a recipient, a key and an alert), packed as it was left by a clean stop. This file's gateway
// runs on a copy of it: first the upgrade, then named users and their roles over HTTP, then the
// Users page and the roles in a real browser (one file: one gateway start for all of it).
const RELEASE_DATA_DIR = join(import.meta.dirname, "..", "fixtures", "release-2026-11-28-data-dir.tgz");
const RELEASE_PASSWORD = "release admin password";

let gw: TestGateway;
let receiver: WebhookReceiver;
let maria: string;
const PASSWORDS = {maria: "maria's long passphrase", victor: "victor's long passphrase"};
const users: Record<string, {id: string}> = {};

beforeAll(async () => {
  const dataDir = tempDir();
  execFileSync("tar", ["xzf", RELEASE_DATA_DIR, "-C", dataDir]);
  // More sign-ins than a person makes in a minute: the throttle is session.test.ts's subject.
  gw = await startTestGateway({dashboard: {sign_in_attempts_per_minute: 100}}, {dataDir});
  receiver = await startWebhookReceiver(systemClock);
});
afterAll(async () => {
  await receiver?.close();
  await gw?.stop();
});

describe("upgrading a data dir from the release with one admin password", () => {
  it("makes that password the admin user's, and keeps the recipients, keys and alerts", async () => {
    expect((await gw.call("GET", "/dashboard/api/session", {key: null})).body.password_set).toBe(true);
    // The page of that release (and any script) signs in without a name: that is "admin".
    const unnamed = await signIn(gw, RELEASE_PASSWORD);
    const session = await unnamed.call("GET", "/dashboard/api/session");
    expect(session.body.user).toMatchObject({name: "admin", role: "admin"});
    const named = await signIn(gw, RELEASE_PASSWORD, "admin");
    expect((await named.call("GET", "/api/v1/keys")).body.items.map((key: {name: string}) => key.name)).toEqual([
      "initial admin",
      "plc-gateway"
    ]);
    const recipients = (await named.call("GET", "/api/v1/recipients")).body.items;
    expect(recipients.map((recipient: {name: string}) => recipient.name)).toEqual(["Maria Schmidt"]);
    maria = recipients[0].uuid;
    const alerts = (await named.call("GET", "/api/v1/notifications")).body.items;
    expect(alerts.map((alert: {message: string}) => alert.message)).toEqual(["before the upgrade"]);
    expect((await named.call("GET", "/api/v1/users")).body.items).toEqual([
      expect.objectContaining({name: "admin", role: "admin", recipient_uuid: null})
    ]);
  });
});

const createUser = (body: Record<string, unknown>) => gw.call("POST", "/api/v1/users", {body});
const sendAlert = async (message: string) =>
  (
    await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: maria, message, priority: "high"}
    })
  ).body.notification_uuid as string;

describe("the users API (admin only)", () => {
  it("creates named users with a role, optionally as a recipient, and never shows a password or its hash", async () => {
    const operator = await createUser({
      name: "Maria",
      role: "operator",
      password: PASSWORDS.maria,
      recipient_uuid: maria
    });
    expect(operator.status).toBe(201);
    expect(operator.headers.get("location")).toBe(`/api/v1/users/${operator.body.id}`);
    expect(operator.body).toMatchObject({name: "Maria", role: "operator", recipient_uuid: maria});
    const viewer = await createUser({name: "Victor", role: "viewer", password: PASSWORDS.victor});
    expect(viewer.status).toBe(201);
    users.maria = operator.body;
    users.victor = viewer.body;

    const list = await gw.call("GET", "/api/v1/users");
    expect(list.body.items.map((user: {name: string}) => user.name)).toEqual(["admin", "Maria", "Victor"]);
    // The release's single password now lives only in the admin user: written once, with the first change.
    const stored = JSON.parse(readFileSync(join(gw.dataDir, "config.json"), "utf8"));
    expect(stored.dashboard.password_hash).toBeNull();
    expect(stored.dashboard_users.map((user: {name: string}) => user.name)).toEqual(["admin", "Maria", "Victor"]);
    const everything = JSON.stringify([list.body, operator.body, viewer.body]) + gw.logLines.join("\n");
    for (const secret of [PASSWORDS.maria, PASSWORDS.victor, "scrypt$", "password_hash"])
      expect(everything).not.toContain(secret);
  });

  it("refuses a taken name (in any case), an unknown recipient, a role it does not know and a short password", async () => {
    const refusals: Array<[Record<string, unknown>, number, string]> = [
      [{name: "maria", role: "viewer", password: "long enough password"}, 409, "/name"],
      [
        {name: "Otto", role: "viewer", password: "long enough password", recipient_uuid: "no-such"},
        422,
        "/recipient_uuid"
      ],
      [{name: "Otto", role: "root", password: "long enough password"}, 400, "/role"],
      [{name: "Otto", role: "viewer", password: "short"}, 400, "/password"]
    ];
    for (const [body, status, pointer] of refusals) {
      const answer = await createUser(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body.errors.map((error: {pointer: string}) => error.pointer)).toContain(pointer);
    }
    expect((await gw.call("GET", "/api/v1/users")).body.items).toHaveLength(3);
  });

  it("never leaves the box without an admin: the last one cannot be demoted or deleted", async () => {
    const admin = (await gw.call("GET", "/api/v1/users")).body.items[0];
    const demote = await gw.call("PATCH", `/api/v1/users/${admin.id}`, {body: {role: "viewer"}});
    expect(demote.status).toBe(409);
    expect(demote.body.detail).toContain("last admin");
    expect((await gw.call("DELETE", `/api/v1/users/${admin.id}`)).status).toBe(409);
    expect((await gw.call("GET", `/api/v1/users/${admin.id}`)).body.role).toBe("admin");
  });
});

describe("API keys", () => {
  it("keep their scopes and may name their owner, whom the audit log shows beside the key's name", async () => {
    const created = await gw.call("POST", "/api/v1/keys", {
      body: {name: "line-3 plc", scopes: ["notifications:send"], owner: "Maria"}
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({scopes: ["notifications:send"], owner: "Maria"});
    const keys = (await gw.call("GET", "/api/v1/keys")).body.items;
    expect(keys.find((key: {name: string}) => key.name === "plc-gateway").owner).toBeNull();
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      key: created.body.key,
      body: {recipient_uuid: maria, message: "from the owned key", priority: "low"}
    });
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${sent.body.notification_uuid}`);
    expect(audit.body.items[0].actor).toEqual({type: "api_key", id: created.body.id, name: "line-3 plc (Maria)"});
    expect((await gw.call("GET", "/api/v1/users", {key: created.body.key})).status).toBe(403);
  });
});

describe("roles over HTTP", () => {
  let viewer: DashboardClient;
  let operator: DashboardClient;
  beforeAll(async () => {
    viewer = await signIn(gw, PASSWORDS.victor, "Victor");
    operator = await signIn(gw, PASSWORDS.maria, "MARIA");
  });

  it("lets a viewer read, and refuses every change with a 403 that says what the role may do", async () => {
    const alert = await sendAlert("Press 7 oil temperature");
    for (const path of [
      "/api/v1/notifications",
      "/api/v1/recipients",
      `/api/v1/notifications/${alert}`,
      "/api/v1/audit"
    ])
      expect((await viewer.call("GET", path)).status, path).toBe(200);
    const changes: Array<[string, string, unknown]> = [
      ["POST", `/dashboard/api/notifications/${alert}/ack`, {}],
      ["POST", `/api/v1/notifications/${alert}/ack`, {}],
      ["POST", `/api/v1/notifications/${alert}/resolve`, undefined],
      ["POST", "/api/v1/recipients", {name: "Mallory", email: "m@example.com"}],
      ["POST", "/api/v1/maintenance", {reason: "x", ends_at: "2099-01-01T00:00:00Z"}],
      ["GET", "/api/v1/users", undefined],
      ["GET", "/api/v1/keys", undefined]
    ];
    for (const [method, path, body] of changes) {
      const answer = await viewer.call(method, path, {body});
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toMatchObject({code: "forbidden", type: "/problems/forbidden"});
      expect(answer.body.detail).toBe(
        "Victor is signed in as viewer, which may only read: ask an admin to do this or to change your role"
      );
    }
    expect((await gw.call("GET", `/api/v1/notifications/${alert}`)).body.status).not.toBe("acknowledged");
  });

  it("lets an operator run a shift (maintenance, test pages) but not change the plant's setup", async () => {
    const window = await operator.call("POST", "/api/v1/maintenance", {
      body: {reason: "Line 3 retooling", ends_at: new Date(Date.now() + 3600_000).toISOString(), targets: [maria]}
    });
    expect(window.status).toBe(201);
    // Past authorisation: what a test page then answers is the test page's business.
    const test = await operator.call("POST", `/api/v1/recipients/${maria}/test`, {body: {channel: "email"}});
    expect([401, 403]).not.toContain(test.status);
    expect((await operator.call("POST", `/api/v1/maintenance/${window.body.uuid}/end`)).status).toBe(200);
    for (const [method, path] of [
      ["POST", "/api/v1/recipients"],
      ["POST", "/api/v1/escalation-policies"],
      ["POST", "/api/v1/keys"],
      ["GET", "/api/v1/integrations"],
      ["PATCH", `/api/v1/users/${users.victor.id}`]
    ]) {
      const answer = await operator.call(method, path, {body: method === "GET" ? undefined : {}});
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.detail).toContain(
        "Maria is signed in as operator, which may only read, acknowledge and resolve"
      );
    }
  });

  it("records a dashboard acknowledgement as the person in the alert, the audit log and the events", async () => {
    const hook = await gw.call("POST", "/api/v1/webhooks", {
      body: {url: receiver.url, events: ["notification.acknowledged"]}
    });
    const alert = await sendAlert("Line 3 hydraulics pressure low");
    const acked = await operator.call("POST", `/dashboard/api/notifications/${alert}/ack`, {body: {note: "on my way"}});
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({acknowledged_by: "Maria Schmidt", acknowledged_via: "dashboard"});

    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${alert}&action=notification.acknowledged`);
    expect(audit.body.items[0]).toMatchObject({
      actor: {type: "dashboard", id: users.maria.id, name: "Maria"},
      detail: {by: "Maria Schmidt", via: "dashboard"}
    });
    const delivery = await eventually(
      "the acknowledged event's delivery",
      () => receiver.received.map((each) => verifyDelivery(each, hook.body.secret)),
      (events) => events.some((event) => JSON.stringify(event).includes(alert))
    );
    const event = delivery.find((each) => JSON.stringify(each).includes(alert));
    expect(JSON.stringify(event)).toContain('"acknowledged_by":"Maria Schmidt"');
    expect(JSON.stringify(event)).toContain('"acknowledged_via":"dashboard"');
  });

  it("ends a user's sessions when an admin sets their password, and the audit log names who did it", async () => {
    const reset = await gw.call("POST", `/api/v1/users/${users.victor.id}/password`, {
      body: {password: "victor's new passphrase"}
    });
    expect(reset.status).toBe(200);
    expect((await viewer.call("GET", "/api/v1/notifications")).status).toBe(401);
    expect(
      (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {name: "Victor", password: PASSWORDS.victor}}))
        .status
    ).toBe(401);
    viewer = await signIn(gw, "victor's new passphrase", "Victor");
    // Maria's session is hers alone: it goes on.
    expect((await operator.call("GET", "/api/v1/notifications")).status).toBe(200);
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${users.victor.id}&action=user.password_set`);
    expect(audit.body.items[0].actor).toMatchObject({type: "api_key", name: "initial admin"});
  });

  it("ends a deleted user's sessions at once", async () => {
    expect((await gw.call("DELETE", `/api/v1/users/${users.victor.id}`)).status).toBe(204);
    expect((await viewer.call("GET", "/api/v1/notifications")).status).toBe(401);
  });
});

describe("the Users page and roles in a real browser", () => {
  let browser: Browser;
  let alert: string;
  const OLGA = {name: "Olga", password: "olga's long passphrase"};
  const VERA = {name: "Vera", password: "vera's long passphrase"};
  const MESSAGE = "Press 7 hydraulic leak";
  beforeAll(async () => {
    browser = await launchChromium();
    alert = await sendAlert(MESSAGE);
  });
  afterAll(() => browser?.close());

  it("lets an admin add an operator who is a recipient, and a viewer", async () => {
    const {context, page, outside, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "users", {name: "admin", password: RELEASE_PASSWORD});
    await page.getByRole("heading", {name: "Users", exact: true}).waitFor();
    const form = page.locator("form.new-user");
    for (const [who, role, recipient] of [
      [OLGA, "operator", "Maria Schmidt"],
      [VERA, "viewer", ""]
    ] as const) {
      await form.getByLabel("Name").fill(who.name);
      await form.getByLabel("Role").selectOption(role);
      await form.getByLabel("Is recipient").selectOption(recipient ? {label: recipient} : {value: ""});
      await form.getByLabel("Password").fill(who.password);
      await form.getByRole("button", {name: "Create user"}).click();
      await page.locator("article.user", {has: page.getByRole("heading", {name: who.name})}).waitFor();
    }
    const olga = page.locator("article.user", {has: page.getByRole("heading", {name: "Olga"})});
    expect(await olga.textContent()).toContain("Acknowledges as the recipient Maria Schmidt");
    const stored = (await gw.call("GET", "/api/v1/users")).body.items;
    expect(stored.slice(-2).map((user: {name: string; role: string}) => [user.name, user.role])).toEqual([
      ["Olga", "operator"],
      ["Vera", "viewer"]
    ]);
    await checkPage(page, "users (desktop)");
    expect(outside).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("shows a viewer no changes, and answers one tried anyway with a 403 in words", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "notifications", VERA);
    const card = page.locator("article.notification", {hasText: MESSAGE});
    await card.waitFor();
    expect(await page.locator("#signed-in-as").textContent()).toBe("Vera (viewer)");
    expect(await card.getByRole("button", {name: "Acknowledge"}).isVisible()).toBe(false);
    for (const link of ["Users", "API keys", "Outbound webhooks"])
      expect(await page.getByRole("link", {name: link}).isVisible(), link).toBe(false);
    expect(await page.getByRole("link", {name: "Audit log"}).isVisible()).toBe(true);
    // The audit log reads, naming people, though the keys' list it also names keys from is an admin's.
    await page.goto(`${gw.url}/dashboard/#/audit`);
    await page.locator("tbody tr", {hasText: "Olga"}).first().waitFor();

    await page.goto(`${gw.url}/dashboard/#/users`);
    const problem = page.locator(".form-problem");
    await problem.waitFor();
    expect(await problem.textContent()).toBe(
      "This page could not be loaded" +
        "Vera is signed in as viewer, which may only read: ask an admin to do this or to change your role"
    );
    // The same words for a change the page did not offer, sent from the page's own script.
    const refused = await page.evaluate(async (id) => {
      const session: any = await (await fetch("/dashboard/api/session")).json();
      const answer = await fetch(`/dashboard/api/notifications/${id}/ack`, {
        method: "POST",
        headers: {"Content-Type": "application/json", "X-CSRF-Token": session.csrf_token},
        body: "{}"
      });
      return {status: answer.status, body: (await answer.json()) as any};
    }, alert);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("Vera is signed in as viewer, which may only read");
    expect((await gw.call("GET", `/api/v1/notifications/${alert}`)).body.status).not.toBe("acknowledged");
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it("records an operator's acknowledgement from the page as the recipient they are", async () => {
    const {context, page, scriptErrors} = await openContext(browser, DESKTOP);
    await signInThroughPage(page, gw.url, "notifications", OLGA);
    const card = page.locator("article.notification", {hasText: MESSAGE});
    await card.getByRole("button", {name: "Acknowledge"}).click();
    await expect.poll(() => card.locator(".badge").nth(1).textContent()).toBe("acknowledged");
    await card.locator("summary", {hasText: "Timeline"}).click();
    expect(await card.locator(".timeline").textContent()).toContain("Acknowledged by Maria Schmidt via dashboard");
    // An operator starts maintenance (the page names no integration or heartbeat: their lists are an admin's).
    await page.goto(`${gw.url}/dashboard/#/maintenance`);
    await page.locator("summary", {hasText: "Start maintenance"}).waitFor();
    // An operator sees no Users page link and no setup forms, but may send test pages.
    expect(await page.getByRole("link", {name: "Users"}).isVisible()).toBe(false);
    await page.goto(`${gw.url}/dashboard/#/recipients`);
    await page.getByRole("heading", {name: "Recipients and groups"}).waitFor();
    expect(await page.getByRole("button", {name: "New recipient"}).isVisible()).toBe(false);
    expect(await page.getByRole("button", {name: "Send test"}).first().isVisible()).toBe(true);
    expect(scriptErrors).toEqual([]);
    await context.close();
  });
});
