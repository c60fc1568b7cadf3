import http, {type IncomingHttpHeaders} from "node:http";
import {readFileSync} from "node:fs";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {injector} from "@tsed/di";
import {Platform} from "@tsed/platform-http";
import {signDelivery} from "../../src/lib/webhook-signing.js";
import {createRecipient, journalCounts, startTestGateway, type TestGateway} from "../support/gateway.js";
import {eventually} from "../support/eventually.js";

// Every request enters through one door: Ts.ED on Express. Until 2026-11-28 the hot routes (send,
// ack, heartbeat pings, integration events) were served by a second door, a lane on node:http
// ahead of Express. The answers every route gave then (status, headers, content type, problem
// bodies; the lane's routes with their whole bodies) were recorded from that gateway into
// one-door.answers.json, before the lane was taken out; the gateway must still give them, apart
// from ids, times and per-request headers.

const SEND_PATH = "/api/v1/notifications/send";

interface Fixture {
  gw: TestGateway;
  recipient: string;
  readerKey: string;
  heartbeat: string;
  pingToken: string;
  integration: {id: string; secret: string; token: string};
  /** A fresh alert's id, to acknowledge. */
  alert(): Promise<string>;
}

async function fixture(): Promise<Fixture> {
  // The sweep below refuses a hundred requests from one address on purpose: the throttle is brute-force.test.ts's subject.
  const gw = await startTestGateway({
    rate_limit: {per_second: 1_000_000, burst: 1_000_000, auth_failures_per_minute: 1_000_000}
  });
  const recipient = await createRecipient(gw);
  const readerKey = (await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["notifications:read"]}}))
    .body.key;
  const heartbeat = (
    await gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "nightly-backup", period_seconds: 3600, target: recipient}
    })
  ).body;
  const integration = (
    await gw.call("POST", "/api/v1/integrations", {body: {name: "go-services", kind: "generic", target: recipient}})
  ).body;
  const alert = async () =>
    (await gw.call("POST", SEND_PATH, {body: {recipient_uuid: recipient, message: "to acknowledge", priority: "info"}}))
      .body.notification_uuid as string;
  return {
    gw,
    recipient,
    readerKey,
    heartbeat: heartbeat.name,
    pingToken: new URL(heartbeat.ping_url).pathname.split("/")[2],
    integration: {
      id: integration.id,
      secret: integration.secret,
      token: new URL(integration.url).searchParams.get("token")!
    },
    alert
  };
}

interface Request {
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function send(gw: TestGateway, {method, path, body, headers}: Request): Promise<RawAnswer> {
  const url = new URL(gw.url);
  const sized = body === undefined ? headers : {...headers, "Content-Length": String(Buffer.byteLength(body))};
  return new Promise((resolve, reject) => {
    const request = http.request({host: url.hostname, port: url.port, method, path, headers: sized}, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8")
        })
      );
    });
    request.on("error", reject);
    request.end(body);
  });
}

// Ids, times, remaining budgets and per-request headers differ between two gateways by nature; everything else must not.
function comparable(answer: RawAnswer, fx: Fixture) {
  const varying = new Set(["date", "connection", "keep-alive", "x-request-id", "ratelimit"]);
  const own: Array<[string, string]> = [
    [fx.recipient, "RECIPIENT"],
    [fx.integration.id, "INTEGRATION"],
    [fx.gw.adminKey.split("_")[1], "ADMIN"],
    [fx.readerKey.split("_")[1], "READER"]
  ];
  const normal = (text: string) =>
    own
      .reduce((result, [value, name]) => result.replaceAll(value, name), text)
      .replace(/(notif|esc|att)_[0-9A-Z]{26}/g, "$1_ID")
      .replace(/\d{4}-\d\d-\d\dT[0-9:.]+Z/g, "TIME")
      .replace(/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ/g, "BACKUP_TIME");
  return {
    status: answer.status,
    headerNames: Object.keys(answer.headers)
      .filter((name) => !varying.has(name))
      .sort(),
    contentType: answer.headers["content-type"],
    location: normal(String(answer.headers.location)),
    body: normal(answer.text)
  };
}

const json = {"Content-Type": "application/json"};
const post = (path: string, body: unknown, headers: Record<string, string>): Request => ({
  method: "POST",
  path,
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: {...json, ...headers}
});
const admin = (fx: Fixture) => ({"X-API-Key": fx.gw.adminKey});
const alertBody = (fx: Fixture, fields: Record<string, unknown> = {}) => ({
  recipient_uuid: fx.recipient,
  message: "disk full",
  priority: "high",
  ...fields
});
const event = (alertId: string) => ({alert_id: alertId, action: "fire", title: `event ${alertId}`});
const eventsPath = (fx: Fixture) => `/api/v1/integrations/${fx.integration.id}/events`;

/** A case: its name, the status both ways must answer, and the request for a gateway's fixtures. */
type Case = [string, number, (fx: Fixture) => Request | Promise<Request>];

const sendCases: Case[] = [
  ["accepted, short form", 202, (fx) => post(SEND_PATH, alertBody(fx), admin(fx))],
  [
    "accepted, long form",
    200,
    (fx) => post(SEND_PATH, alertBody(fx, {priority: "low"}), {...admin(fx), Prefer: "return=representation"})
  ],
  ["an enum value out of range", 400, (fx) => post(SEND_PATH, alertBody(fx, {priority: "urgent"}), admin(fx))],
  [
    "an unknown field and a missing one",
    400,
    (fx) => post(SEND_PATH, {recipient_uuid: fx.recipient, priority: "high", colour: "red"}, admin(fx))
  ],
  ["malformed JSON", 400, (fx) => post(SEND_PATH, '{"recipient_uuid": ', admin(fx))],
  [
    "malformed JSON without a valid key (the body is read first)",
    400,
    () => post(SEND_PATH, "{", {"X-API-Key": "klx_nope"})
  ],
  ["JSON null", 400, (fx) => post(SEND_PATH, "null", admin(fx))],
  ["a JSON array", 400, (fx) => post(SEND_PATH, "[1]", admin(fx))],
  ["a BOM before the JSON", 202, (fx) => post(SEND_PATH, `\uFEFF${JSON.stringify(alertBody(fx))}`, admin(fx))],
  ["a body over 64 KiB", 413, (fx) => post(SEND_PATH, alertBody(fx, {message: "x".repeat(70_000)}), admin(fx))],
  [
    "a text body",
    415,
    (fx) => ({...post(SEND_PATH, "disk full", admin(fx)), headers: {"Content-Type": "text/plain", ...admin(fx)}})
  ],
  ["no body", 400, (fx) => ({method: "POST", path: SEND_PATH, headers: admin(fx)})],
  ["no key", 401, (fx) => post(SEND_PATH, alertBody(fx), {})],
  ["an unknown key", 401, (fx) => post(SEND_PATH, alertBody(fx), {"X-API-Key": "klx_00000000_unknown"})],
  ["a key without the send scope", 403, (fx) => post(SEND_PATH, alertBody(fx), {"X-API-Key": fx.readerKey})],
  [
    "an unknown recipient",
    422,
    (fx) => post(SEND_PATH, alertBody(fx, {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b"}), admin(fx))
  ],
  [
    "an Idempotency-Key of the wrong form",
    400,
    (fx) => post(SEND_PATH, alertBody(fx), {...admin(fx), "Idempotency-Key": "two words"})
  ],
  [
    "a charset in the content type",
    202,
    (fx) => post(SEND_PATH, alertBody(fx), {"Content-Type": "application/json; charset=UTF-8", ...admin(fx)})
  ],
  ["a trailing slash and capitals", 202, (fx) => post("/API/v1/notifications/send/", alertBody(fx), admin(fx))]
];

const ackCases: Case[] = [
  [
    "acknowledged",
    200,
    async (fx) => post(`/api/v1/notifications/${await fx.alert()}/ack`, {by: "alice", note: "on it"}, admin(fx))
  ],
  [
    "acknowledged without a body",
    200,
    async (fx) => ({method: "POST", path: `/api/v1/notifications/${await fx.alert()}/ack`, headers: admin(fx)})
  ],
  [
    "an unknown field in the body",
    400,
    async (fx) => post(`/api/v1/notifications/${await fx.alert()}/ack`, {by: "alice", mood: "grim"}, admin(fx))
  ],
  [
    "an unknown notification",
    404,
    (fx) => post("/api/v1/notifications/notif_00000000000000000000000000/ack", {}, admin(fx))
  ],
  [
    "a key without the ack scope",
    403,
    async (fx) => post(`/api/v1/notifications/${await fx.alert()}/ack`, {}, {"X-API-Key": fx.readerKey})
  ]
];

const pingCases: Case[] = [
  [
    "a keyed ping",
    200,
    (fx) => ({method: "POST", path: `/api/v1/heartbeats/${fx.heartbeat}/ping`, headers: admin(fx)})
  ],
  [
    "a keyed ping of an unknown heartbeat",
    404,
    (fx) => ({method: "POST", path: "/api/v1/heartbeats/no-such-job/ping", headers: admin(fx)})
  ],
  [
    "a keyed ping without a key",
    401,
    (fx) => ({method: "POST", path: `/api/v1/heartbeats/${fx.heartbeat}/ping`, headers: {}})
  ],
  ["a ping URL, GET", 200, (fx) => ({method: "GET", path: `/ping/${fx.pingToken}`, headers: {}})],
  ["a ping URL, HEAD", 200, (fx) => ({method: "HEAD", path: `/ping/${fx.pingToken}`, headers: {}})],
  [
    "a ping URL, POST with a text body",
    200,
    (fx) => ({
      method: "POST",
      path: `/ping/${fx.pingToken}/start`,
      body: "rsync done",
      headers: {"Content-Type": "text/plain"}
    })
  ],
  ["a ping URL's fail", 200, (fx) => ({method: "POST", path: `/ping/${fx.pingToken}/fail`, body: "{}", headers: json})],
  ["an unknown ping token", 404, () => ({method: "GET", path: "/ping/no-such-token", headers: {}})],
  // The lane leaves a path it cannot decode to Express, which words the refusal.
  ["a ping token that is not valid percent-encoding", 400, () => ({method: "GET", path: "/ping/%E0%A4%A", headers: {}})]
];

const eventCases: Case[] = [
  ["an event with a key", 202, (fx) => post(eventsPath(fx), event("by-key"), admin(fx))],
  [
    "an event with the url's token",
    202,
    (fx) => post(`${eventsPath(fx)}?token=${fx.integration.token}`, event("by-token"), {})
  ],
  ["an event with a wrong token", 401, (fx) => post(`${eventsPath(fx)}?token=wrong`, event("by-token"), {})],
  [
    "a signed event",
    202,
    (fx) =>
      post(eventsPath(fx), event("signed"), {
        ...signDelivery({secret: fx.integration.secret}, "msg_lane_1", Date.now(), JSON.stringify(event("signed")))
      })
  ],
  ["an event that fails its schema", 400, (fx) => post(eventsPath(fx), {alert_id: "x", action: "explode"}, admin(fx))],
  [
    "an event for an unknown integration",
    404,
    (fx) => post("/api/v1/integrations/int_unknown/events", event("x"), admin(fx))
  ]
];

const cases = [...sendCases, ...ackCases, ...pingCases, ...eventCases];

/** A concrete path for a route template; the ids name nothing. */
function concrete(template: string): string {
  return template.replace(/:(\w+)/g, (_, name: string) => (name === "deliveryId" ? "1" : `no-such-${name}`));
}

/** Every registered route, with the admin key and without one (an empty JSON body where it takes one). */
function sweep(fx: Fixture): Array<[string, Request]> {
  const routes = injector()
    .get<Platform>(Platform)
    .getLayers()
    .filter((layer) => layer.isProvider())
    .map((layer) => `${layer.method.toUpperCase()} ${String(layer.path)}`)
    .sort();
  return routes.flatMap((route) => {
    const [method, template] = route.split(" ");
    const body = ["POST", "PATCH"].includes(method) ? "{}" : undefined;
    const request = (headers: Record<string, string>): Request => ({
      method,
      path: concrete(template),
      body,
      headers: body === undefined ? headers : {...json, ...headers}
    });
    return [
      [`${route}, admin key`, request(admin(fx))],
      [`${route}, no key`, request({})]
    ] as Array<[string, Request]>;
  });
}

/** The answer's shape; its body only where it is a problem document (other bodies hold counts and clocks). */
function recorded(answer: RawAnswer, fx: Fixture, wholeBody: boolean) {
  const shape = comparable(answer, fx);
  return wholeBody || String(shape.contentType).startsWith("application/problem+json") ? shape : {...shape, body: "-"};
}

/**
 * The answers of the gateway with the lane (main at 1cb56c9), written by this file's answers
 * below (`JSON.stringify(answers)`) before the lane was taken out.
 */
const RECORDED = JSON.parse(readFileSync(new URL("one-door.answers.json", import.meta.url), "utf8")) as Record<
  string,
  unknown
>;

// One gateway for the file: the recorded answers are taken first, on its fresh fixtures.
let fx: Fixture;
beforeAll(async () => {
  fx = await fixture();
});
afterAll(() => fx.gw.stop());

describe("every route answers through the one door as it did through two", () => {
  const answers: Record<string, unknown> = {};
  const requestIds: unknown[] = [];
  beforeAll(async () => {
    for (const [name, , make] of cases) {
      const answer = await send(fx.gw, await make(fx));
      answers[name] = recorded(answer, fx, true);
      requestIds.push(answer.headers["x-request-id"]);
    }
    for (const [name, request] of sweep(fx)) answers[name] = recorded(await send(fx.gw, request), fx, false);
  }, 120_000);

  it.each(cases.map(([name, status]) => [name, status] as const))("%s: %i", (name, status) => {
    expect((answers[name] as {status: number}).status).toBe(status);
  });

  // Routes added since the recording are not in it; each recorded one must answer as recorded.
  it.each(Object.keys(RECORDED))("%s: as recorded before the lane was taken out", (name) => {
    expect(answers[name]).toEqual(RECORDED[name]);
  });

  it("gives every answer an X-Request-Id", () => {
    for (const id of requestIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("the one door", () => {
  it("echoes the client's X-Request-Id and logs the request under it with the route and the key's id", async () => {
    const answer = await send(fx.gw, post(SEND_PATH, alertBody(fx), {...admin(fx), "X-Request-Id": "trace-4711"}));
    expect(answer.status).toBe(202);
    expect(answer.headers["x-request-id"]).toBe("trace-4711");
    const line = await eventually(
      "the request's log line",
      () =>
        fx.gw.logLines
          .map((text) => JSON.parse(text))
          .find((entry) => entry.msg === "http" && entry.request_id === "trace-4711"),
      (entry) => entry !== undefined
    );
    expect(line).toMatchObject({method: "POST", path: SEND_PATH, status: 202, key_id: fx.gw.adminKey.split("_")[1]});
  });

  it("stores nothing when the client hangs up in the middle of the body, and serves the next request", async () => {
    const before = await journalCounts(fx.gw);
    const url = new URL(fx.gw.url);
    await new Promise<void>((resolve) => {
      const request = http.request({
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: SEND_PATH,
        headers: {...json, ...admin(fx), "Content-Length": 500}
      });
      request.on("error", () => resolve());
      request.write(JSON.stringify(alertBody(fx)).slice(0, 20), () => setTimeout(() => request.destroy(), 50));
      request.on("close", () => resolve());
    });
    const next = await send(fx.gw, post(SEND_PATH, alertBody(fx, {message: "after the hang-up"}), admin(fx)));
    expect(next.status).toBe(202);
    const after = await journalCounts(fx.gw);
    expect(after.notifications - before.notifications).toBe(1);
  });
});
