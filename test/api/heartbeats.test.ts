import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";

const clock = new ManualClock(Date.parse("2026-01-15T10:00:00.000Z"));
let gw: TestGateway;
let target: string;

beforeAll(async () => {
  gw = await startTestGateway({}, {clock});
  target = await createRecipient(gw, {name: "Night shift"});
});
afterAll(() => gw.stop());

const at = () => new Date(clock.now()).toISOString();
const sweep = () => gw.gateway.heartbeats.monitor.tick();
const pointers = (answer: {body: {errors?: Array<{pointer: string}>}}) =>
  (answer.body.errors ?? []).map((error) => error.pointer);

async function createHeartbeat(name: string, fields: Record<string, unknown> = {}) {
  const answer = await gw.call("POST", "/api/v1/heartbeats", {
    body: {name, period_seconds: 60, grace_seconds: 30, target, ...fields}
  });
  if (answer.status !== 201) throw new Error(`heartbeat not created: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const statusOf = async (name: string) => (await gw.call("GET", `/api/v1/heartbeats/${name}`)).body.status;

/** Notifications raised for a heartbeat, newest first. */
async function pagesOf(name: string) {
  const list = await gw.call("GET", `/api/v1/notifications?recipient_uuid=${target}&limit=200`);
  return list.body.items.filter((item: {dedup_key: string | null}) => item.dedup_key === `heartbeat:${name}`);
}

/** The path of a ping URL, to call it on whatever address the gateway serves now. */
const pingPath = (pingUrl: string) => new URL(pingUrl).pathname;

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

  it("goes new -> up -> late -> down at the exact times, pages once, and a good ping resolves the page", async () => {
    const heartbeat = await createHeartbeat("boiler-2", {priority: "critical"});
    clock.advance(3_600_000);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("new");

    const ping = await gw.call("POST", "/api/v1/heartbeats/boiler-2/ping");
    const pingedAt = clock.now();
    expect(ping.status).toBe(200);
    expect(ping.body).toEqual({name: "boiler-2", status: "up", expected_at: new Date(pingedAt + 60_000).toISOString()});
    expect((await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body).toMatchObject({
      last_ping_at: at(),
      down_at: new Date(pingedAt + 90_000).toISOString()
    });
    // /readyz shows the sweep alive and aimed no later than this heartbeat's late time.
    const sweepHealth = (await gw.call("GET", "/readyz", {key: null})).body.heartbeats;
    expect(sweepHealth).toMatchObject({running: true, last_pass_failed: false});
    expect(Date.parse(sweepHealth.next_wake_at)).toBeLessThanOrEqual(pingedAt + 60_000);

    clock.advance(59_999);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("up");
    clock.advance(1);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("late");
    clock.advance(29_999);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("late");
    expect(await pagesOf("boiler-2")).toHaveLength(0);
    clock.advance(1);
    await sweep();
    const down = (await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body;
    expect(down).toMatchObject({status: "down", expected_at: null, down_at: null});
    const pages = await pagesOf("boiler-2");
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({
      id: down.notification_id,
      priority: "critical",
      source: "heartbeat:boiler-2",
      occurrences: 1
    });
    expect(pages[0].message).toContain("boiler-2");

    // Exactly once: more sweeps, later, page nobody again.
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      await sweep();
    }
    expect(await pagesOf("boiler-2")).toHaveLength(1);
    expect((await pagesOf("boiler-2"))[0].occurrences).toBe(1);

    const recovered = await gw.call("GET", pingPath(heartbeat.ping_url), {key: null});
    expect(recovered.status).toBe(200);
    expect(recovered.body.status).toBe("up");
    const resolved = await gw.call("GET", `/api/v1/notifications/${down.notification_id}`);
    expect(resolved.body.status).toBe("resolved");
    expect((await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body.notification_id).toBeNull();

    const audit = await gw.call("GET", "/api/v1/audit?subject_id=boiler-2");
    expect(audit.body.items.map((entry: {action: string}) => entry.action)).toEqual([
      "heartbeat.up",
      "heartbeat.down",
      "heartbeat.late",
      "heartbeat.up",
      "heartbeat.created"
    ]);
    expect(audit.body.items[1]).toMatchObject({
      actor: {type: "system", id: null},
      detail: {from: "late", reason: "missed", notification_id: down.notification_id}
    });
    const accepted = await gw.call("GET", `/api/v1/audit?subject_id=${down.notification_id}`);
    const actions = accepted.body.items.map((entry: {action: string}) => entry.action);
    expect(actions[0]).toBe("notification.resolved");
    expect(actions[actions.length - 1]).toBe("notification.accepted");
    expect(accepted.body.items[actions.length - 1]).toMatchObject({
      actor: {type: "system"},
      source: "heartbeat:boiler-2"
    });
  });

  it("pages at once on /fail, not again on a second failure, and resolves on the next ping", async () => {
    const {ping_url: url} = await createHeartbeat("backup-job");
    expect((await gw.call("POST", pingPath(url), {key: null})).body.status).toBe("up");
    const failed = await gw.call("POST", `${pingPath(url)}/fail`, {key: null});
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe("down");
    expect(await pagesOf("backup-job")).toHaveLength(1);
    expect((await pagesOf("backup-job"))[0].message).toContain("failure");
    await gw.call("GET", `${pingPath(url)}/fail`, {key: null});
    expect(await pagesOf("backup-job")).toHaveLength(1);
    await gw.call("GET", pingPath(url), {key: null});
    expect((await pagesOf("backup-job"))[0].status).toBe("resolved");
    expect(await statusOf("backup-job")).toBe("up");
  });

  it("pages when a started run does not finish within the grace time", async () => {
    const {ping_url: url} = await createHeartbeat("nightly-export", {period_seconds: 86_400, grace_seconds: 300});
    await gw.call("GET", pingPath(url), {key: null});
    clock.advance(3_600_000);
    expect((await gw.call("GET", `${pingPath(url)}/start`, {key: null})).status).toBe(200);
    const started = (await gw.call("GET", "/api/v1/heartbeats/nightly-export")).body;
    expect(started).toMatchObject({
      status: "up",
      last_start_at: at(),
      down_at: new Date(clock.now() + 300_000).toISOString()
    });
    clock.advance(299_999);
    await sweep();
    expect(await statusOf("nightly-export")).toBe("up");
    clock.advance(1);
    await sweep();
    expect(await statusOf("nightly-export")).toBe("down");
    expect(await pagesOf("nightly-export")).toHaveLength(1);
  });

  it("answers HEAD, GET and POST on the ping URL; an unknown token is a 404 problem", async () => {
    const {ping_url: url} = await createHeartbeat("edge-probe");
    const head = await fetch(`${gw.url}${pingPath(url)}`, {method: "HEAD"});
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(await statusOf("edge-probe")).toBe("up");
    const post = await gw.call("POST", pingPath(url), {key: null, body: {log: "ok"}});
    expect(post.body).toMatchObject({name: "edge-probe", status: "up"});
    // Whatever a device's tool posts (curl -d, a form) is a ping too, not a 415.
    const plain = await gw.call("POST", pingPath(url), {
      key: null,
      raw: "backup finished in 42 s",
      headers: {"Content-Type": "text/plain"}
    });
    expect(plain.status).toBe(200);
    // The token is a credential: it never reaches the log.
    expect(gw.logLines.join("\n")).not.toContain(pingPath(url).split("/")[2]);
    const unknown = await gw.call("GET", "/ping/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", {key: null});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    expect(JSON.stringify(unknown.body.detail)).not.toContain("AAAA");
  });

  it("pauses (no page however long it is silent) and resumes watching from now", async () => {
    const {ping_url: url} = await createHeartbeat("kiln-3");
    await gw.call("GET", pingPath(url), {key: null});
    const paused = await gw.call("POST", "/api/v1/heartbeats/kiln-3/pause");
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({status: "paused", expected_at: null, down_at: null});
    clock.advance(86_400_000);
    await sweep();
    expect(await statusOf("kiln-3")).toBe("paused");
    expect(await pagesOf("kiln-3")).toHaveLength(0);
    const resumed = await gw.call("POST", "/api/v1/heartbeats/kiln-3/resume");
    expect(resumed.body).toMatchObject({status: "up", expected_at: new Date(clock.now() + 60_000).toISOString()});
    expect((await gw.call("POST", "/api/v1/heartbeats/nothing-here/pause")).status).toBe(404);
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

  it("never pages for time the gateway was stopped: every heartbeat gets a fresh grace from the restart", async () => {
    await createHeartbeat("conveyor");
    await gw.call("POST", "/api/v1/heartbeats/conveyor/ping");
    await gw.restart();
    // Ten minutes pass while the gateway is down; the heartbeat was due after one.
    clock.advance(600_000);
    await gw.restart();
    const restartedAt = clock.now();
    await sweep();
    expect((await gw.call("GET", "/api/v1/heartbeats/conveyor")).body).toMatchObject({
      status: "late",
      down_at: new Date(restartedAt + 30_000).toISOString()
    });
    expect(await pagesOf("conveyor")).toHaveLength(0);
    clock.advance(29_999);
    await sweep();
    expect(await statusOf("conveyor")).toBe("late");
    clock.advance(1);
    await sweep();
    expect(await statusOf("conveyor")).toBe("down");
    expect(await pagesOf("conveyor")).toHaveLength(1);
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

  // Last: it leaves this address throttled.
  it("throttles an address that keeps presenting unknown ping tokens, but never a valid one", async () => {
    const {ping_url: url} = await createHeartbeat("last-one");
    clock.advance(3_600_000);
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push((await gw.call("GET", `/ping/guess-${i}-AAAAAAAAAAAAAAAAAAAAAAAA`, {key: null})).status);
    expect(statuses).toEqual([...Array(20).fill(404), 429]);
    const throttled = await gw.call("GET", "/ping/guess-new-AAAAAAAAAAAAAAAAAAAAAAAA", {key: null});
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await gw.call("GET", pingPath(url), {key: null})).status).toBe(200);
  });
});
