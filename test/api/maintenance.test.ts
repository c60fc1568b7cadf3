import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import {integrationRig} from "../support/integration-rig.js";

// Managing maintenance windows: create (with its validation and Idempotency-Key), read, list by
// status, end early, delete before it begins, scopes and audit. What a window does to alerts is in
// maintenance-paging.test.ts.
const {clock, start} = integrationRig();
let gw: TestGateway;
let target: string;
let integrationId: string;

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  let generic: {id: string};
  ({gw, target, generic} = await start());
  integrationId = generic.id;
  await gw.call("POST", "/api/v1/heartbeats", {body: {name: "boiler-2", period_seconds: 60, target}});
});
afterAll(() => gw.stop());

const create = (body: Record<string, unknown>, options: {key?: string; headers?: Record<string, string>} = {}) =>
  gw.call("POST", "/api/v1/maintenance", {body, ...options});

describe("maintenance windows API", () => {
  it("creates a window that starts now, answers it whole, and reads it back", async () => {
    const answer = await create({
      ends_at: iso(clock.now() + 2 * HOUR),
      reason: "Line 3 planned shutdown",
      targets: [target],
      sources: ["plc-line-3"],
      integrations: [integrationId],
      heartbeats: ["boiler-2"]
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("location")).toBe(`/api/v1/maintenance/${answer.body.uuid}`);
    expect(answer.body).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      starts_at: iso(clock.now()),
      ends_at: iso(clock.now() + 2 * HOUR),
      reason: "Line 3 planned shutdown",
      targets: [target],
      sources: ["plc-line-3"],
      integrations: [integrationId],
      heartbeats: ["boiler-2"],
      status: "active",
      created_at: iso(clock.now()),
      created_by: {type: "api_key", id: expect.any(String)}
    });
    expect((await gw.call("GET", `/api/v1/maintenance/${answer.body.uuid}`)).body).toEqual(answer.body);
    await gw.call("POST", `/api/v1/maintenance/${answer.body.uuid}/end`);
  });

  it("refuses bad times, an empty scope, unknown references and unknown fields", async () => {
    const now = clock.now();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ends_at: iso(now + HOUR), reason: "x"}, 400, ""],
      [{starts_at: iso(now + 2 * HOUR), ends_at: iso(now + HOUR), reason: "x", targets: [target]}, 400, "/ends_at"],
      [{ends_at: iso(now - HOUR), reason: "x", targets: [target]}, 400, "/ends_at"],
      [{ends_at: "tomorrow", reason: "x", targets: [target]}, 400, "/ends_at"],
      [{ends_at: iso(now + HOUR), reason: "", targets: [target]}, 400, "/reason"],
      [{ends_at: iso(now + HOUR), reason: "x", targets: [target], colour: "red"}, 400, "/colour"],
      [{ends_at: iso(now + HOUR), reason: "x", targets: [target, crypto.randomUUID()]}, 422, "/targets/1"],
      [{ends_at: iso(now + HOUR), reason: "x", integrations: ["int_nope"]}, 422, "/integrations/0"],
      [{ends_at: iso(now + HOUR), reason: "x", heartbeats: ["no-such-beat"]}, 422, "/heartbeats/0"]
    ];
    for (const [body, status, pointer] of cases) {
      const answer = await create(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body.errors.map((error: {pointer: string}) => error.pointer)).toContain(pointer);
    }
    expect((await gw.call("GET", "/api/v1/maintenance?status=active")).body.items).toEqual([]);
  });

  it("lists windows by status, deletes one that has not begun and refuses to delete one that has", async () => {
    const now = clock.now();
    const upcoming = (
      await create({starts_at: iso(now + HOUR), ends_at: iso(now + 2 * HOUR), reason: "a", targets: [target]})
    ).body;
    const active = (await create({ends_at: iso(now + HOUR), reason: "b", sources: ["press-7"]})).body;
    expect(upcoming.status).toBe("upcoming");
    const uuids = async (query: string) =>
      (await gw.call("GET", `/api/v1/maintenance${query}`)).body.items.map((item: {uuid: string}) => item.uuid);
    expect(await uuids("?status=upcoming")).toEqual([upcoming.uuid]);
    expect(await uuids("?status=active")).toEqual([active.uuid]);
    expect(await uuids("")).toEqual(expect.arrayContaining([upcoming.uuid, active.uuid]));
    expect((await gw.call("GET", "/api/v1/maintenance?status=soon")).status).toBe(400);

    expect((await gw.call("DELETE", `/api/v1/maintenance/${active.uuid}`)).status).toBe(409);
    expect((await gw.call("DELETE", `/api/v1/maintenance/${upcoming.uuid}`)).status).toBe(204);
    expect((await gw.call("GET", `/api/v1/maintenance/${upcoming.uuid}`)).status).toBe(404);
    await gw.call("POST", `/api/v1/maintenance/${active.uuid}/end`);
  });

  it("ends a window early at the gateway's now, once, and audits its life", async () => {
    const window = (await create({ends_at: iso(clock.now() + HOUR), reason: "swap the PLC", targets: [target]})).body;
    clock.advance(60_000);
    const ended = await gw.call("POST", `/api/v1/maintenance/${window.uuid}/end`);
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({uuid: window.uuid, status: "ended", ends_at: iso(clock.now())});
    expect((await gw.call("POST", `/api/v1/maintenance/${window.uuid}/end`)).status).toBe(409);
    expect((await gw.call("POST", `/api/v1/maintenance/${crypto.randomUUID()}/end`)).status).toBe(404);
    expect(
      (await gw.call("GET", "/api/v1/maintenance?status=ended")).body.items.map((item: any) => item.uuid)
    ).toContain(window.uuid);

    const audit = await gw.call("GET", "/api/v1/audit?limit=200");
    const mine = audit.body.items.filter((entry: any) => entry.subject.id === window.uuid);
    expect(mine.map((entry: any) => entry.action)).toEqual(["maintenance.ended", "maintenance.created"]);
    expect(mine[0].detail).toEqual({ends_at: iso(clock.now()), early: true, released: 0});
    expect(mine[1].detail).toMatchObject({reason: "swap the PLC", targets: [target]});
  });

  it("honours Idempotency-Key on create, and the recipients scopes", async () => {
    const body = {ends_at: iso(clock.now() + HOUR), reason: "firmware", targets: [target]};
    const headers = {"Idempotency-Key": "maint-1"};
    const first = await create(body, {headers});
    const again = await create(body, {headers});
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    await gw.call("POST", `/api/v1/maintenance/${first.body.uuid}/end`);

    const key = async (scopes: string[]) =>
      (await gw.call("POST", "/api/v1/keys", {body: {name: scopes.join(" "), scopes}})).body.key;
    const reader = await key(["recipients:read"]);
    const writer = await key(["recipients:write"]);
    expect((await gw.call("GET", "/api/v1/maintenance", {key: reader})).status).toBe(200);
    expect((await create(body, {key: reader})).status).toBe(403);
    const made = await create(body, {key: writer});
    expect(made.status).toBe(201);
    expect((await gw.call("POST", `/api/v1/maintenance/${made.body.uuid}/end`, {key: writer})).status).toBe(200);
  });
});

describe("the maintenance releaser on /readyz", () => {
  it("is shown running, and a failed pass makes the gateway unready until a pass succeeds", async () => {
    const readiness = async () => {
      const answer = await gw.call("GET", "/readyz");
      return {status: answer.status, maintenance: answer.body.maintenance};
    };
    const before = await readiness();
    expect(before.maintenance).toMatchObject({running: true, last_pass_failed: false});
    const healthyStatus = before.status;

    // A pass that cannot read its windows (as a bug or a damaged table would make it): held alerts could stay held.
    const db = gw.gateway.journal.db;
    db.exec("ALTER TABLE maintenance_windows RENAME TO maintenance_windows_away");
    try {
      await gw.gateway.services.maintenance.releaser.tick();
      const failing = await readiness();
      expect(failing.maintenance.last_pass_failed).toBe(true);
      expect(failing.status).toBe(503);
    } finally {
      db.exec("ALTER TABLE maintenance_windows_away RENAME TO maintenance_windows");
    }
    await gw.gateway.services.maintenance.releaser.tick();
    expect(await readiness()).toEqual({
      status: healthyStatus,
      maintenance: expect.objectContaining({last_pass_failed: false})
    });
  });
});
