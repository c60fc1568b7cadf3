import {Webhook} from "standardwebhooks";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {journalCounts, type TestGateway} from "../support/gateway.js";
import {eventsPath, integrationRig, urlPath, type CreatedIntegration} from "../support/integration-rig.js";

// How an integration's events authenticate: signatures, replays, the keyless url, API keys, rotation.
const {clock, start, sendEvent, sendSigned, signed} = integrationRig();
let gw: TestGateway;
let target: string;
let generic: CreatedIntegration;

beforeAll(async () => {
  ({gw, target, generic} = await start());
});
afterAll(() => gw.stop());

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
