import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {Webhook} from "standardwebhooks";
import {ManualClock} from "../../src/lib/clock.js";
import {signDelivery} from "../../src/lib/webhook-signing.js";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  journalCounts,
  startTestGateway,
  type TestGateway
} from "../support/gateway.js";

const clock = new ManualClock(Date.parse("2026-03-02T09:00:00.000Z"));
let gw: TestGateway;
let target: string;
let generic: {id: string; secret: string; url: string};
let sender: string;

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock});
  target = await createRecipient(gw, {name: "Ops on call"});
  generic = (await gw.call("POST", "/api/v1/integrations", {body: {name: "go-services", kind: "generic", target}}))
    .body;
  sender = (await gw.call("POST", "/api/v1/keys", {body: {name: "go library", scopes: ["notifications:send"]}})).body
    .key;
});
afterAll(() => gw.stop());

const pointers = (answer: {body: {errors?: Array<{pointer: string}>}}) =>
  (answer.body.errors ?? []).map((error) => error.pointer);
const eventsPath = (id: string) => `/api/v1/integrations/${id}/events`;
const urlPath = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};
const sendEvent = (body: unknown, options: {id?: string; key?: string | null} = {}) =>
  gw.call("POST", eventsPath(options.id ?? generic.id), {key: options.key === undefined ? sender : options.key, body});

/** A signed request: `sign` gets the exact body bytes and returns the headers to send with them. */
function sendSigned(body: unknown, headers: Record<string, string>, id = generic.id) {
  return gw.call("POST", eventsPath(id), {
    key: null,
    raw: JSON.stringify(body),
    headers: {"Content-Type": "application/json", ...headers}
  });
}
let messages = 0;
/** Each event its own webhook-id unless one is given: a repeated id is a repeat of the same event. */
const signed = (body: unknown, secret = generic.secret, atMs = clock.now(), messageId = `msg_${atMs}_${++messages}`) =>
  ({...signDelivery({secret}, messageId, atMs, JSON.stringify(body))}) as Record<string, string>;

describe("integrations API", () => {
  it("creates an integration: the secret is shown once, the keyless url always (to admins)", async () => {
    const answer = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "prometheus", kind: "alertmanager", target, default_priority: "medium"}
    });
    expect(answer.status).toBe(201);
    const {id, secret, url} = answer.body;
    expect(id).toMatch(/^int_[0-9A-Z]{26}$/);
    expect(answer.headers.get("location")).toBe(`/api/v1/integrations/${id}`);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(url).toMatch(new RegExp(`^${gw.url}/api/v1/integrations/${id}/events\\?token=[A-Za-z0-9_-]{32}$`));
    expect(answer.body).toMatchObject({name: "prometheus", kind: "alertmanager", target, default_priority: "medium"});
    const read = await gw.call("GET", `/api/v1/integrations/${id}`);
    expect(read.body).not.toHaveProperty("secret");
    expect(read.body.url).toBe(url);
    const list = await gw.call("GET", "/api/v1/integrations");
    expect(list.body.items.find((item: {id: string}) => item.id === id)).toEqual(read.body);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${id}`);
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({
      action: "integration.created",
      detail: {name: "prometheus", kind: "alertmanager"}
    });
    expect(JSON.stringify(audit.body)).not.toContain(secret);
  });

  it.each([
    [{kind: "generic"}, 400, "/name"],
    [{name: " ", kind: "generic"}, 400, "/name"],
    [{name: "x", kind: "zabbix"}, 400, "/kind"],
    [{name: "x"}, 400, "/kind"],
    [{name: "x", kind: "generic", default_priority: "urgent"}, 400, "/default_priority"],
    [{name: "x", kind: "generic", secret: "whsec_mine"}, 400, "/secret"],
    [{name: "x", kind: "generic", target: "7c6f1d0e-0000-4000-8000-000000000000"}, 422, "/target"]
  ])("refuses %j with %i at %s and stores nothing", async (fields, status, pointer) => {
    const before = readFileSync(join(gw.dataDir, "config.json"), "utf8");
    const answer = await gw.call("POST", "/api/v1/integrations", {body: {target, ...fields}});
    expect(answer.status).toBe(status);
    expect(pointers(answer)).toContain(pointer);
    expect(readFileSync(join(gw.dataDir, "config.json"), "utf8")).toBe(before);
  });

  it("updates with JSON Merge Patch, refuses read-only fields and answers 404 for unknown ids", async () => {
    const {id} = (await gw.call("POST", "/api/v1/integrations", {body: {name: "ci", kind: "generic", target}})).body;
    const patched = await gw.call("PATCH", `/api/v1/integrations/${id}`, {
      body: {name: "ci-runners", default_priority: "low"}
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({name: "ci-runners", default_priority: "low", kind: "generic"});
    for (const body of [{kind: "alertmanager"}, {secret: "whsec_x"}, {url: "http://x"}, {id: "int_x"}, {name: null}]) {
      expect((await gw.call("PATCH", `/api/v1/integrations/${id}`, {body})).status, JSON.stringify(body)).toBe(400);
    }
    expect(
      (await gw.call("PATCH", `/api/v1/integrations/${id}`, {body: {target: "7c6f1d0e-0000-4000-8000-000000000000"}}))
        .status
    ).toBe(422);
    expect((await gw.call("GET", `/api/v1/integrations/${id}`)).body).toEqual(patched.body);
    const unknown = "int_00000000000000000000000000";
    expect((await gw.call("GET", `/api/v1/integrations/${unknown}`)).status).toBe(404);
    expect((await gw.call("PATCH", `/api/v1/integrations/${unknown}`, {body: {name: "y"}})).status).toBe(404);
    expect((await gw.call("DELETE", `/api/v1/integrations/${unknown}`)).status).toBe(404);
  });

  it("is for admin keys only", async () => {
    expect((await gw.call("GET", "/api/v1/integrations", {key: sender})).status).toBe(403);
    expect(
      (await gw.call("POST", "/api/v1/integrations", {key: sender, body: {name: "x", kind: "generic", target}})).status
    ).toBe(403);
  });
});

describe("generic events", () => {
  it("fires, merges repeats while unresolved, resolves, and fires anew after that", async () => {
    const fire = {
      alert_id: "db1-disk",
      action: "fire",
      title: "Disk full",
      message: "db1 /var at 97%",
      severity: "error",
      source: "db1",
      link: "https://grafana.factory.lan/d/db1"
    };
    const first = await sendEvent(fire);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      integration_id: generic.id,
      results: [
        {
          alert_id: "db1-disk",
          action: "fire",
          outcome: "created",
          notification_uuid: expect.stringMatching(/^notif_/),
          heartbeat_status: null
        }
      ]
    });
    const id = first.body.results[0].notification_uuid;
    const notification = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(notification).toMatchObject({
      recipient_uuid: target,
      message: "Disk full: db1 /var at 97%",
      priority: "high",
      source: "db1",
      link: fire.link,
      dedup_key: `${generic.id}:db1-disk`,
      occurrences: 1
    });

    const repeat = await sendEvent(fire);
    expect(repeat.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: id});
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.occurrences).toBe(2);

    const resolved = await sendEvent({alert_id: "db1-disk", action: "resolve"});
    expect(resolved.body.results[0]).toMatchObject({action: "resolve", outcome: "resolved", notification_uuid: id});
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
    expect((await sendEvent({alert_id: "db1-disk", action: "resolve"})).body.results[0]).toMatchObject({
      outcome: "no_open_alert",
      notification_uuid: null
    });

    const again = await sendEvent(fire);
    expect(again.body.results[0].outcome).toBe("created");
    expect(again.body.results[0].notification_uuid).not.toBe(id);

    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${id}`);
    expect(audit.body.items.map((entry: {action: string}) => entry.action)).toEqual([
      "notification.resolved",
      "notification.deduplicated",
      "notification.accepted"
    ]);
    for (const entry of audit.body.items) expect(entry.actor).toEqual({type: "integration", id: generic.id});
    expect(audit.body.items[2]).toMatchObject({source: "db1", detail: {target, priority: "high"}});
  });

  it("keeps merging into an acknowledged alert until it is resolved, so repeats never page again", async () => {
    const fire = {alert_id: "line-3-stop", action: "fire", title: "Line 3 stopped"};
    const id = (await sendEvent(fire)).body.results[0].notification_uuid;
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body).toMatchObject({
      source: "go-services",
      priority: "high"
    });
    expect((await gw.call("POST", `/api/v1/notifications/${id}/ack`)).status).toBe(200);
    const repeat = await sendEvent(fire);
    expect(repeat.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: id});
    const read = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(read).toMatchObject({status: "acknowledged", occurrences: 2});
    expect((await sendEvent({alert_id: "line-3-stop", action: "resolve"})).body.results[0].outcome).toBe("resolved");
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
  });

  it("scopes alert ids to their integration", async () => {
    const other = (await gw.call("POST", "/api/v1/integrations", {body: {name: "other-team", kind: "generic", target}}))
      .body;
    const mine = (await sendEvent({alert_id: "shared-id", action: "fire", message: "mine"})).body.results[0];
    const theirs = (await sendEvent({alert_id: "shared-id", action: "fire", message: "theirs"}, {id: other.id})).body
      .results[0];
    expect(mine.outcome).toBe("created");
    expect(theirs.outcome).toBe("created");
    expect(theirs.notification_uuid).not.toBe(mine.notification_uuid);
  });

  it("maps severities to priorities and falls back to the integration's default", async () => {
    const cases: Array<[string | undefined, string]> = [
      ["critical", "critical"],
      ["PAGE", "critical"],
      ["warning", "medium"],
      ["notice", "low"],
      ["info", "info"],
      [undefined, "high"]
    ];
    for (const [severity, priority] of cases) {
      const body = {
        alert_id: `sev-${severity ?? "none"}`,
        action: "fire",
        message: "severity check",
        ...(severity ? {severity} : {})
      };
      const id = (await sendEvent(body)).body.results[0].notification_uuid;
      expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.priority, String(severity)).toBe(priority);
    }
  });

  it("pings the heartbeat named alert_id, creating it on first use", async () => {
    const first = await sendEvent({alert_id: "edge-gateway-4", action: "heartbeat", period_seconds: 30});
    expect(first.body.results[0]).toEqual({
      alert_id: "edge-gateway-4",
      action: "heartbeat",
      outcome: "heartbeat_created",
      notification_uuid: null,
      heartbeat_status: "up"
    });
    const heartbeat = (await gw.call("GET", "/api/v1/heartbeats/edge-gateway-4")).body;
    expect(heartbeat).toMatchObject({
      period_seconds: 30,
      target,
      priority: "high",
      status: "up",
      created_by_integration: generic.id,
      last_ping_at: new Date(clock.now()).toISOString()
    });
    clock.advance(10_000);
    const second = await sendEvent({alert_id: "edge-gateway-4", action: "heartbeat"});
    expect(second.body.results[0]).toMatchObject({outcome: "pinged", heartbeat_status: "up"});
    expect((await gw.call("GET", "/api/v1/heartbeats/edge-gateway-4")).body.last_ping_at).toBe(
      new Date(clock.now()).toISOString()
    );
  });

  it.each([
    [{action: "fire", message: "x"}, "/alert_id"],
    [{alert_id: "a", message: "x"}, "/action"],
    [{alert_id: "a", action: "explode"}, "/action"],
    [{alert_id: "a", action: "fire"}, "/title"],
    [{alert_id: "a", action: "fire", title: "x", severity: "apocalyptic"}, "/severity"],
    [{alert_id: "a", action: "fire", title: "x", link: "ftp://x"}, "/link"],
    [{alert_id: "a", action: "fire", title: "x", titel: "typo"}, "/titel"],
    [{alert_id: "a", action: "fire", title: 5}, "/title"],
    [{alert_id: "new-beat", action: "heartbeat"}, "/period_seconds"],
    [{alert_id: "new-beat", action: "heartbeat", period_seconds: 5}, "/period_seconds"],
    [{alert_id: "Not A Slug", action: "heartbeat", period_seconds: 60}, "/alert_id"],
    [{version: "4", alerts: [{status: "firing", fingerprint: "f"}]}, "/version"],
    [[{alert_id: "a", action: "fire", title: "x"}], ""]
  ])("refuses %j at %s and changes nothing", async (body, pointer) => {
    const before = await journalCounts(gw);
    const config = readFileSync(join(gw.dataDir, "config.json"), "utf8");
    const answer = await sendEvent(body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_request");
    expect(pointers(answer)).toContain(pointer);
    expect(await journalCounts(gw)).toEqual(before);
    expect(readFileSync(join(gw.dataDir, "config.json"), "utf8")).toBe(config);
  });

  it("refuses malformed JSON and non-JSON bodies", async () => {
    const malformed = await gw.call("POST", eventsPath(generic.id), {
      key: sender,
      raw: "{not json",
      headers: {"Content-Type": "application/json"}
    });
    expect(malformed.body.code).toBe("malformed_json");
    const text = await gw.call("POST", eventsPath(generic.id), {
      key: sender,
      raw: "fire",
      headers: {"Content-Type": "text/plain"}
    });
    expect(text.status).toBe(415);
  });
});

describe("event authentication", () => {
  const event = (alertId: string) => ({alert_id: alertId, action: "fire", title: `signed ${alertId}`});

  it("accepts an event signed with the integration's secret, in either signature header", async () => {
    const body = event("signed-1");
    const answer = await sendSigned(body, signed(body));
    expect(answer.status).toBe(202);
    const id = answer.body.results[0].notification_uuid;
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${id}`);
    expect(audit.body.items[0]).toMatchObject({
      action: "notification.accepted",
      actor: {type: "integration", id: generic.id}
    });

    const other = event("signed-2");
    const {"webhook-signature": _standard, ...onlyContractHeader} = signed(other);
    expect((await sendSigned(other, onlyContractHeader)).status).toBe(202);
  });

  it("accepts what the stock standardwebhooks library signs", async () => {
    const body = event("signed-by-library");
    const raw = JSON.stringify(body);
    const at = new Date(clock.now());
    const signature = new Webhook(generic.secret).sign("msg_library", at, raw);
    const answer = await sendSigned(body, {
      "webhook-id": "msg_library",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature
    });
    expect(answer.status).toBe(202);
  });

  it("runs a repeated webhook-id once: retries and replays answer the first results and change nothing", async () => {
    const fire = event("replayed-fire");
    const first = await sendSigned(fire, signed(fire, generic.secret, clock.now(), "msg_fire_once"));
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const resolve = {alert_id: "replayed-fire", action: "resolve"};
    const resolved = await sendSigned(resolve, signed(resolve, generic.secret, clock.now(), "msg_resolve_once"));
    expect(resolved.body.results[0]).toMatchObject({
      outcome: "resolved",
      notification_uuid: first.body.results[0].notification_uuid
    });
    // The alert fires again; a captured resolve replayed inside the signature's window must not silence it.
    const again = await sendSigned(fire, signed(fire));
    expect(again.body.results[0].outcome).toBe("created");
    clock.advance(60_000);
    const before = await journalCounts(gw);
    const replay = await sendSigned(resolve, signed(resolve, generic.secret, clock.now(), "msg_resolve_once"));
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(resolved.body);
    // A sender's retry of the first fire (re-signed with its own timestamp) is answered the same way.
    const retry = await sendSigned(fire, signed(fire, generic.secret, clock.now(), "msg_fire_once"));
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await journalCounts(gw)).toEqual(before);
    expect(
      (await gw.call("GET", `/api/v1/notifications/${again.body.results[0].notification_uuid}`)).body.status
    ).not.toBe("resolved");
  });

  it("refuses a webhook-id reused for another body, and one too long to keep", async () => {
    const body = event("id-reused");
    expect((await sendSigned(body, signed(body, generic.secret, clock.now(), "msg_reused"))).status).toBe(202);
    const before = await journalCounts(gw);
    const other = event("id-reused-other");
    const mismatch = await sendSigned(other, signed(other, generic.secret, clock.now(), "msg_reused"));
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toMatchObject({code: "idempotency_mismatch"});
    expect(mismatch.body.detail).toContain("webhook-id");
    const long = await sendSigned(other, signed(other, generic.secret, clock.now(), "m".repeat(256)));
    expect(long.status).toBe(401);
    expect(long.body.detail).toContain("webhook-id");
    expect(await journalCounts(gw)).toEqual(before);
    clock.advance(3_600_000);
  });

  it("accepts a timestamp 300 s off and refuses 301 s off, either way, as a replay", async () => {
    for (const [offsetSeconds, status] of [
      [-300, 202],
      [300, 202],
      [-301, 401],
      [301, 401]
    ] as const) {
      const body = event(`window-${offsetSeconds}`);
      const answer = await sendSigned(body, signed(body, generic.secret, clock.now() + offsetSeconds * 1000));
      expect(answer.status, String(offsetSeconds)).toBe(status);
      if (status === 401) {
        expect(answer.body).toMatchObject({code: "unauthenticated", status: 401});
        expect(answer.body.detail).toContain("300 seconds");
      }
    }
  });

  it("refuses bad signatures with a 401 problem and stores nothing", async () => {
    const body = event("forged");
    const good = signed(body);
    const otherSecret = (
      await gw.call("POST", "/api/v1/integrations", {body: {name: "elsewhere", kind: "generic", target}})
    ).body.secret;
    const attempts: Array<[string, Record<string, string>, unknown]> = [
      ["another integration's secret", signed(body, otherSecret), body],
      ["a tampered body", good, {...body, title: "changed"}],
      ["a tampered webhook-id", {...good, "webhook-id": "msg_other"}, body],
      [
        "a signature that is not base64 of the HMAC",
        {...good, "webhook-signature": "v1,AAAA", "X-Service-Signature": "v1,AAAA"},
        body
      ],
      ["no timestamp", {"webhook-id": good["webhook-id"], "webhook-signature": good["webhook-signature"]}, body],
      ["a timestamp that is not a number", {...good, "webhook-timestamp": "soon"}, body]
    ];
    const before = await journalCounts(gw);
    for (const [what, headers, sent] of attempts) {
      const answer = await sendSigned(sent, headers);
      expect(answer.status, what).toBe(401);
      expect(answer.headers.get("content-type"), what).toContain("application/problem+json");
      expect(JSON.stringify(answer.body), what).not.toContain(generic.secret);
    }
    expect(await journalCounts(gw)).toEqual(before);
    // Failed signatures count as failed authentications; let the address cool down for the tests after this one.
    clock.advance(3_600_000);
  });

  it("accepts the keyless url, and refuses a wrong token or none at all", async () => {
    const answer = await gw.call("POST", urlPath(generic.url), {key: null, body: event("via-url")});
    expect(answer.status).toBe(202);
    expect(answer.headers.get("ratelimit-policy")).toBe('"per-integration";q=200;w=4');
    expect(answer.headers.get("ratelimit")).toMatch(/^"per-integration";r=\d+;t=\d+$/);
    const other = (await gw.call("POST", "/api/v1/integrations", {body: {name: "third", kind: "generic", target}}))
      .body;
    const otherToken = new URL(other.url).searchParams.get("token");
    expect(
      (await gw.call("POST", `${eventsPath(generic.id)}?token=${otherToken}`, {key: null, body: event("wrong-token")}))
        .status
    ).toBe(401);
    expect(
      (await gw.call("POST", `${eventsPath(generic.id)}?token=`, {key: null, body: event("empty-token")})).status
    ).toBe(401);
    const none = await gw.call("POST", eventsPath(generic.id), {key: null, body: event("no-credentials")});
    expect(none.status).toBe(401);
    expect(none.body.detail).toContain("X-API-Key");
    expect(
      (
        await gw.call("POST", `/api/v1/integrations/int_00000000000000000000000000/events?token=${otherToken}`, {
          key: null,
          body: event("x")
        })
      ).status
    ).toBe(401);
  });

  it("checks keys as everywhere else: scope, unknown integration", async () => {
    const reader = (await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["recipients:read"]}})).body
      .key;
    expect((await sendEvent(event("reader"), {key: reader})).status).toBe(403);
    expect((await sendEvent(event("bad-key"), {key: "klx_abcdefgh_" + "x".repeat(40)})).status).toBe(401);
    expect((await sendEvent(event("nowhere"), {id: "int_00000000000000000000000000"})).status).toBe(404);
    clock.advance(3_600_000);
  });

  it("rotates the secret and the url: the old ones stop at once, the alerts stay the integration's", async () => {
    const old = (await gw.call("POST", "/api/v1/integrations", {body: {name: "rotated", kind: "generic", target}}))
      .body;
    const fired = await sendSigned(event("before-rotation"), signed(event("before-rotation"), old.secret), old.id);
    expect(fired.body.results[0].outcome).toBe("created");

    const rotated = await gw.call("POST", `/api/v1/integrations/${old.id}/rotate-credentials`, {body: {}});
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({id: old.id, name: "rotated", kind: "generic", target});
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.secret).not.toBe(old.secret);
    expect(rotated.body.url).not.toBe(old.url);
    const read = await gw.call("GET", `/api/v1/integrations/${old.id}`);
    expect(read.body.url).toBe(rotated.body.url);
    expect(JSON.stringify(read.body)).not.toContain("whsec_");
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${old.id}&action=integration.credentials_rotated`);
    expect(audit.body.items).toHaveLength(1);
    expect(JSON.stringify(audit.body)).not.toContain(rotated.body.secret);

    const body = event("after-rotation");
    expect((await sendSigned(body, signed(body, old.secret), old.id)).status).toBe(401);
    expect((await gw.call("POST", urlPath(old.url), {key: null, body})).status).toBe(401);
    expect((await gw.call("POST", urlPath(rotated.body.url), {key: null, body})).status).toBe(202);
    // The alert fired with the old secret is resolved with the new one: the same integration.
    const resolve = {alert_id: "before-rotation", action: "resolve"};
    const resolved = await sendSigned(resolve, signed(resolve, rotated.body.secret), old.id);
    expect(resolved.body.results[0]).toMatchObject({
      outcome: "resolved",
      notification_uuid: fired.body.results[0].notification_uuid
    });

    expect(
      (await gw.call("POST", "/api/v1/integrations/int_00000000000000000000000000/rotate-credentials", {body: {}}))
        .status
    ).toBe(404);
    // The refused old credentials above count against the address; let it cool down.
    clock.advance(3_600_000);
  });

  it("stops accepting an integration's credentials once it is deleted", async () => {
    const doomed = (await gw.call("POST", "/api/v1/integrations", {body: {name: "doomed", kind: "generic", target}}))
      .body;
    expect((await gw.call("POST", urlPath(doomed.url), {key: null, body: event("before")})).status).toBe(202);
    expect((await gw.call("DELETE", `/api/v1/integrations/${doomed.id}`)).status).toBe(204);
    expect((await gw.call("POST", urlPath(doomed.url), {key: null, body: event("after")})).status).toBe(401);
    const body = event("after-signed");
    expect((await sendSigned(body, signed(body, doomed.secret), doomed.id)).status).toBe(401);
  });
});

describe("alertmanager events", () => {
  let prometheus: {id: string; url: string};
  const alert = (
    fingerprint: string,
    status: string,
    labels: Record<string, string>,
    annotations: Record<string, string> = {}
  ) => ({
    status,
    labels,
    annotations,
    startsAt: "2026-03-02T09:00:00Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: `http://prometheus.factory.lan/graph?g0.expr=${fingerprint}`,
    fingerprint
  });
  const webhook = (status: string, alerts: unknown[]) => ({
    receiver: "klaxon",
    status,
    alerts,
    groupLabels: {alertname: "x"},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.factory.lan",
    version: "4",
    groupKey: "{}:{}",
    truncatedAlerts: 0
  });

  beforeAll(async () => {
    prometheus = (
      await gw.call("POST", "/api/v1/integrations", {
        body: {name: "prometheus", kind: "alertmanager", target, default_priority: "low"}
      })
    ).body;
  });

  it("turns each alert of a group into a notification and resolves them when Alertmanager does", async () => {
    const alerts = [
      alert(
        "a1b2c3d4e5f60001",
        "firing",
        {alertname: "DiskFull", severity: "critical", instance: "db1", job: "node"},
        {summary: "db1 disk 97% full", description: "long text"}
      ),
      alert(
        "a1b2c3d4e5f60002",
        "firing",
        {alertname: "HighLatency", severity: "warning", env: "prod"},
        {description: "p99 over 2 s"}
      ),
      alert("a1b2c3d4e5f60003", "firing", {alertname: "Watchdog", severity: "whatever"})
    ];
    const fired = await gw.call("POST", urlPath(prometheus.url), {key: null, body: webhook("firing", alerts)});
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    expect(
      fired.body.results.map((result: {alert_id: string; outcome: string}) => [result.alert_id, result.outcome])
    ).toEqual([
      ["a1b2c3d4e5f60001", "created"],
      ["a1b2c3d4e5f60002", "created"],
      ["a1b2c3d4e5f60003", "created"]
    ]);
    const [disk, latency, watchdog] = await Promise.all(
      fired.body.results.map(
        async (result: {notification_uuid: string}) =>
          (await gw.call("GET", `/api/v1/notifications/${result.notification_uuid}`)).body
      )
    );
    expect(disk).toMatchObject({
      message: "DiskFull: db1 disk 97% full",
      priority: "critical",
      link: alerts[0].generatorURL,
      service: "node",
      source: "prometheus",
      dedup_key: `${prometheus.id}:a1b2c3d4e5f60001`
    });
    expect(latency).toMatchObject({message: "HighLatency: p99 over 2 s", priority: "medium", environment: "prod"});
    expect(watchdog).toMatchObject({message: "Watchdog", priority: "low"});

    const repeated = await gw.call("POST", urlPath(prometheus.url), {
      key: null,
      body: webhook("firing", alerts.slice(0, 1))
    });
    expect(repeated.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: disk.id});

    const resolved = await gw.call("POST", urlPath(prometheus.url), {
      key: null,
      body: webhook(
        "resolved",
        alerts.map((each) => ({...each, status: "resolved"}))
      )
    });
    expect(resolved.body.results.map((result: {outcome: string}) => result.outcome)).toEqual([
      "resolved",
      "resolved",
      "resolved"
    ]);
    for (const id of [disk.id, latency.id, watchdog.id])
      expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
  });

  it("ignores fields it does not use but refuses a body that is not version 4 or has no alerts", async () => {
    const extra = {
      ...webhook("firing", [alert("ffff000000000001", "firing", {alertname: "Extra"})]),
      futureField: {nested: true}
    };
    expect((await gw.call("POST", urlPath(prometheus.url), {key: null, body: extra})).status).toBe(202);
    for (const [body, pointer] of [
      [{...webhook("firing", []), version: "3"}, "/version"],
      [webhook("firing", []), "/alerts"],
      [webhook("firing", [{status: "firing"}]), "/alerts/0/fingerprint"],
      [webhook("firing", [{...alert("f1", "pending", {}), status: "pending"}]), "/alerts/0/status"],
      [webhook("firing", [alert("f1", "firing", {severity: 3} as never)]), "/alerts/0/labels/severity"],
      [{alert_id: "a", action: "fire", title: "generic body"}, "/version"]
    ] as const) {
      const answer = await gw.call("POST", urlPath(prometheus.url), {key: null, body});
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(pointers(answer), JSON.stringify(body)).toContain(pointer);
    }
  });
});

describe("documentation", () => {
  it("documents the events route with every credential and error", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body;
    const events = spec.paths["/api/v1/integrations/{id}/events"].post;
    expect(Object.keys(events.responses).sort()).toEqual([
      "202",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503"
    ]);
    expect(events.parameters.map((parameter: {name: string}) => parameter.name)).toEqual(
      expect.arrayContaining(["id", "token"])
    );
    expect(events.description).toContain("X-Service-Signature");
    const bodySchema = events.requestBody.content["application/json"].schema;
    expect(JSON.stringify(bodySchema)).toContain("GenericEventModel");
    expect(JSON.stringify(bodySchema)).toContain("AlertmanagerWebhookModel");
  });
});
