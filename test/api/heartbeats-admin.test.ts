import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, type TestGateway} from "../support/gateway.js";
import {heartbeatRig, pingPath} from "../support/heartbeat-rig.js";
import {pointers} from "../support/problem-pointers.js";

// Creating, validating, changing, deleting and documenting heartbeats, and who may do it; what a
// heartbeat does as pings come and go is in heartbeats-pings.test.ts.
const {clock, start, createHeartbeat} = heartbeatRig();
let gw: TestGateway;
let target: string;

beforeAll(async () => {
  ({gw, target} = await start());
});
afterAll(() => gw.stop());

describe("heartbeats API", () => {
  it("creates a heartbeat that is new, with an absolute unguessable ping URL", async () => {
    const answer = await gw.call("POST", "/api/v1/heartbeats", {body: {name: "press-7", period_seconds: 60, target}});
    expect(answer.status).toBe(201);
    expect(answer.headers.get("location")).toBe("/api/v1/heartbeats/press-7");
    expect(answer.body).toMatchObject({
      name: "press-7",
      period_seconds: 60,
      schedule: null,
      timezone: null,
      grace_seconds: 60,
      target,
      priority: "high",
      status: "new",
      last_ping_at: null,
      expected_at: null,
      down_at: null,
      notification_id: null,
      created_by_integration: null
    });
    expect(answer.body.ping_url).toMatch(new RegExp(`^${gw.url}/ping/[A-Za-z0-9_-]{32}$`));
    const read = await gw.call("GET", "/api/v1/heartbeats/press-7");
    expect(read.body).toEqual(answer.body);
    const list = await gw.call("GET", "/api/v1/heartbeats");
    expect(list.body.items.find((item: {name: string}) => item.name === "press-7")).toEqual(answer.body);
    const other = await createHeartbeat("press-8");
    expect(other.ping_url).not.toBe(answer.body.ping_url);
  });

  it.each([
    [{period_seconds: 60, target: "x"}, 400, "/name"],
    [{name: "Press 7", period_seconds: 60}, 400, "/name"],
    [{name: "-press", period_seconds: 60}, 400, "/name"],
    [{name: "p1", period_seconds: 9}, 400, "/period_seconds"],
    [{name: "p1", period_seconds: 60.5}, 400, "/period_seconds"],
    [{name: "p1", period_seconds: "60"}, 400, "/period_seconds"],
    [{name: "p1", period_seconds: 60, grace_seconds: 4}, 400, "/grace_seconds"],
    [{name: "p1"}, 400, "/period_seconds"],
    [{name: "p1", period_seconds: 60, schedule: "0 3 * * *", timezone: "UTC"}, 400, "/period_seconds"],
    [{name: "p1", schedule: "0 3 * * *"}, 400, "/timezone"],
    [{name: "p1", period_seconds: 60, timezone: "UTC"}, 400, "/timezone"],
    [{name: "p1", schedule: "0 3 * * *", timezone: "Mars/Olympus"}, 400, "/timezone"],
    [{name: "p1", schedule: "0 25 * * *", timezone: "UTC"}, 400, "/schedule"],
    [{name: "p1", schedule: "0 0 31 2 *", timezone: "UTC"}, 400, "/schedule"],
    [{name: "p1", period_seconds: 60, priority: "urgent"}, 400, "/priority"],
    [{name: "p1", period_seconds: 60, status: "up"}, 400, "/status"],
    [{name: "p1", period_seconds: 60, target: "7c6f1d0e-0000-4000-8000-000000000000"}, 422, "/target"],
    [{name: "press-7", period_seconds: 60}, 409, null]
  ])("refuses %j with %i at %s and stores nothing", async (fields, status, pointer) => {
    const before = readFileSync(join(gw.dataDir, "config.json"), "utf8");
    const answer = await gw.call("POST", "/api/v1/heartbeats", {body: {target, ...fields}});
    expect(answer.status).toBe(status);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    if (pointer) expect(pointers(answer)).toContain(pointer);
    expect(readFileSync(join(gw.dataDir, "config.json"), "utf8")).toBe(before);
    expect((await gw.call("GET", "/api/v1/heartbeats/p1")).status).toBe(404);
  });

  it("updates with JSON Merge Patch (deadlines move at once) and refuses read-only fields", async () => {
    await createHeartbeat("chiller");
    // The clock only moves forward in this file; a fixed instant makes the cron answer exact.
    clock.set(Date.parse("2026-02-02T11:00:00.000Z"));
    await gw.call("POST", "/api/v1/heartbeats/chiller/ping");
    const pingedAt = clock.now();
    clock.advance(10_000);
    const longer = await gw.call("PATCH", "/api/v1/heartbeats/chiller", {
      body: {period_seconds: 600, priority: "medium"},
      headers: {"Content-Type": "application/merge-patch+json"}
    });
    expect(longer.status).toBe(200);
    expect(longer.body).toMatchObject({
      period_seconds: 600,
      priority: "medium",
      status: "up",
      expected_at: new Date(pingedAt + 600_000).toISOString()
    });
    const cron = await gw.call("PATCH", "/api/v1/heartbeats/chiller", {
      body: {period_seconds: null, schedule: "0 3 * * *", timezone: "Europe/Berlin"}
    });
    expect(cron.status).toBe(200);
    // Pinged at 11:00 UTC on 2 February: the next 03:00 in Berlin (CET) is 02:00 UTC on the 3rd.
    expect(cron.body).toMatchObject({
      period_seconds: null,
      schedule: "0 3 * * *",
      timezone: "Europe/Berlin",
      expected_at: "2026-02-03T02:00:00.000Z"
    });
    for (const [body, pointer] of [
      [{name: "other"}, "/name"],
      [{status: "paused"}, "/status"],
      [{ping_url: "x"}, "/ping_url"],
      [{schedule: null}, "/period_seconds"],
      [{grace_seconds: 1}, "/grace_seconds"]
    ] as const) {
      const refused = await gw.call("PATCH", "/api/v1/heartbeats/chiller", {body});
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(pointers(refused)).toContain(pointer);
    }
    expect((await gw.call("GET", "/api/v1/heartbeats/chiller")).body).toEqual(cron.body);
    expect((await gw.call("PATCH", "/api/v1/heartbeats/nothing-here", {body: {priority: "low"}})).status).toBe(404);
  });

  it("refuses to delete the recipient or group a heartbeat pages, naming the heartbeat", async () => {
    const boiler = await createRecipient(gw, {name: "Boiler room"});
    const group = (
      await gw.call("POST", "/api/v1/groups", {body: {name: "Boiler team", members: [boiler], strategy: "parallel"}})
    ).body.uuid;
    await createHeartbeat("kiln-hall-1", {target: boiler});
    await createHeartbeat("kiln-hall-2", {target: group});
    const refused = await gw.call("DELETE", `/api/v1/recipients/${boiler}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({code: "in_use"});
    const groupRefused = await gw.call("DELETE", `/api/v1/groups/${group}`);
    expect(groupRefused.status).toBe(409);
    expect(groupRefused.body.detail).toContain("heartbeat kiln-hall-2");
    expect((await gw.call("DELETE", "/api/v1/heartbeats/kiln-hall-2")).status).toBe(204);
    expect((await gw.call("DELETE", `/api/v1/groups/${group}`)).status).toBe(204);
    expect((await gw.call("DELETE", `/api/v1/recipients/${boiler}`)).body.detail).toContain("heartbeat kiln-hall-1");
  });

  it("rotates a leaked ping URL: the old one stops at once, the heartbeat keeps its state", async () => {
    const {ping_url: old} = await createHeartbeat("press-9-plc");
    expect((await gw.call("POST", pingPath(old), {key: null})).body.status).toBe("up");
    const rotated = await gw.call("POST", "/api/v1/heartbeats/press-9-plc/rotate-ping-url", {body: {}});
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({name: "press-9-plc", status: "up"});
    expect(rotated.body.ping_url).toMatch(new RegExp(`^${gw.url}/ping/[A-Za-z0-9_-]{32}$`));
    expect(rotated.body.ping_url).not.toBe(old);
    expect((await gw.call("GET", "/api/v1/heartbeats/press-9-plc")).body.ping_url).toBe(rotated.body.ping_url);
    expect((await gw.call("GET", pingPath(old), {key: null})).status).toBe(404);
    expect((await gw.call("GET", pingPath(rotated.body.ping_url), {key: null})).body.status).toBe("up");
    const audit = await gw.call("GET", "/api/v1/audit?subject_id=press-9-plc&action=heartbeat.ping_url_rotated");
    expect(audit.body.items).toHaveLength(1);
    expect((await gw.call("POST", "/api/v1/heartbeats/no-such-beat/rotate-ping-url", {body: {}})).status).toBe(404);
  });

  it("deletes a heartbeat: its ping URL stops working", async () => {
    const {ping_url: url} = await createHeartbeat("old-plc");
    expect((await gw.call("DELETE", "/api/v1/heartbeats/old-plc")).status).toBe(204);
    expect((await gw.call("GET", "/api/v1/heartbeats/old-plc")).status).toBe(404);
    expect((await gw.call("GET", pingPath(url), {key: null})).status).toBe(404);
    expect((await gw.call("DELETE", "/api/v1/heartbeats/old-plc")).status).toBe(404);
  });

  it("lets a notifications:send key ping but not manage heartbeats", async () => {
    await createHeartbeat("pump-1");
    const sender = (await gw.call("POST", "/api/v1/keys", {body: {name: "plc", scopes: ["notifications:send"]}})).body
      .key;
    const reader = (await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["recipients:read"]}})).body
      .key;
    expect((await gw.call("POST", "/api/v1/heartbeats/pump-1/ping", {key: sender})).status).toBe(200);
    expect((await gw.call("POST", "/api/v1/heartbeats/pump-1/ping", {key: reader})).status).toBe(403);
    expect((await gw.call("POST", "/api/v1/heartbeats/pump-1/ping", {key: null})).status).toBe(401);
    expect((await gw.call("POST", "/api/v1/heartbeats/nothing-here/ping", {key: sender})).status).toBe(404);
    expect((await gw.call("GET", "/api/v1/heartbeats", {key: sender})).status).toBe(403);
    expect(
      (await gw.call("POST", "/api/v1/heartbeats", {key: sender, body: {name: "x1", period_seconds: 60, target}}))
        .status
    ).toBe(403);
  });

  it("documents every heartbeat route with its errors", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body;
    expect(Object.keys(spec.paths["/api/v1/heartbeats"].post.responses).sort()).toEqual([
      "201",
      "400",
      "401",
      "403",
      "409",
      "413",
      "415",
      "422",
      "429",
      "500"
    ]);
    expect(Object.keys(spec.paths["/api/v1/heartbeats/{name}/ping"].post.responses).sort()).toEqual([
      "200",
      "401",
      "403",
      "404",
      "429",
      "500"
    ]);
    for (const path of ["/ping/{token}", "/ping/{token}/start", "/ping/{token}/fail"]) {
      expect(Object.keys(spec.paths[path]).sort(), path).toEqual(["get", "head", "post"]);
      expect(Object.keys(spec.paths[path].get.responses).sort(), path).toEqual(["200", "404", "429"]);
    }
  });
});
