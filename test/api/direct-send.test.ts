import http, {type IncomingHttpHeaders, type IncomingMessage} from "node:http";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {DirectSendRoute, SEND_PATH} from "../../src/api/fast-lane/direct-send.js";
import {createRecipient, journalCounts, startTestGateway, type TestGateway} from "../support/gateway.js";
import {eventually} from "../support/eventually.js";

// The send endpoint has two ways in: the direct route on node:http for plain requests, and the
// Ts.ED route for everything else. A chunked body always takes the Ts.ED route, so sending the
// same request both ways shows whether they answer alike.

let gw: TestGateway;
let alice: string;
let readOnlyKey: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await createRecipient(gw);
  const created = await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["notifications:read"]}});
  readOnlyKey = created.body.key;
});
afterAll(() => gw.stop());

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function post(body: string, headers: Record<string, string>, chunked: boolean): Promise<RawAnswer> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {host: url.hostname, port: url.port, method: "POST", path: SEND_PATH, headers: chunked ? headers : {...headers, "Content-Length": Buffer.byteLength(body)}},
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString("utf8")}));
      }
    );
    request.on("error", reject);
    if (chunked) {
      // No Content-Length and two writes: node sends Transfer-Encoding: chunked.
      request.write(body.slice(0, 3));
      request.end(body.slice(3));
    } else {
      request.end(body);
    }
  });
}

// Ids, times and the per-request headers differ between two sends by nature; everything else must not.
function comparable(answer: RawAnswer) {
  const varying = new Set(["date", "connection", "keep-alive", "transfer-encoding", "x-request-id"]);
  const text = answer.text.replace(/(notif|esc|att)_[0-9A-Z]{26}/g, "$1_ID").replace(/\d{4}-\d\d-\d\dT[0-9:.]+Z/g, "TIME");
  return {
    status: answer.status,
    headerNames: Object.keys(answer.headers).filter((name) => !varying.has(name)).sort(),
    contentType: answer.headers["content-type"],
    location: answer.headers.location?.replace(/notif_[0-9A-Z]{26}/, "notif_ID"),
    body: text
  };
}

describe("the send endpoint's two routes", () => {
  const json = {"Content-Type": "application/json"};
  const cases: Array<[string, () => {body: string; headers: Record<string, string>}]> = [
    ["accepted, short form", () => ({body: JSON.stringify({recipient_uuid: alice, message: "disk full", priority: "high"}), headers: {...json, "X-API-Key": gw.adminKey}})],
    ["accepted, long form", () => ({body: JSON.stringify({recipient_uuid: alice, message: "disk full", priority: "low"}), headers: {...json, "X-API-Key": gw.adminKey, Prefer: "return=representation"}})],
    ["an enum value out of range", () => ({body: JSON.stringify({recipient_uuid: alice, message: "x", priority: "urgent"}), headers: {...json, "X-API-Key": gw.adminKey}})],
    ["an unknown field and a missing one", () => ({body: JSON.stringify({recipient_uuid: alice, priority: "high", colour: "red"}), headers: {...json, "X-API-Key": gw.adminKey}})],
    ["malformed JSON", () => ({body: '{"recipient_uuid": ', headers: {...json, "X-API-Key": gw.adminKey}})],
    ["malformed JSON without a valid key (the body is read first)", () => ({body: "{", headers: {...json, "X-API-Key": "klx_nope"}})],
    ["JSON null", () => ({body: "null", headers: {...json, "X-API-Key": gw.adminKey}})],
    ["a JSON array", () => ({body: "[1]", headers: {...json, "X-API-Key": gw.adminKey}})],
    ["an unknown key", () => ({body: JSON.stringify({recipient_uuid: alice, message: "x", priority: "high"}), headers: {...json, "X-API-Key": "klx_00000000_unknown"}})],
    ["a key without the send scope", () => ({body: JSON.stringify({recipient_uuid: alice, message: "x", priority: "high"}), headers: {...json, "X-API-Key": readOnlyKey}})],
    ["an unknown recipient", () => ({body: JSON.stringify({recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "x", priority: "high"}), headers: {...json, "X-API-Key": gw.adminKey}})],
    ["an Idempotency-Key of the wrong form", () => ({body: JSON.stringify({recipient_uuid: alice, message: "x", priority: "high"}), headers: {...json, "X-API-Key": gw.adminKey, "Idempotency-Key": "two words"}})],
    ["a charset in the content type", () => ({body: JSON.stringify({recipient_uuid: alice, message: "x", priority: "info"}), headers: {"Content-Type": "application/json; charset=UTF-8", "X-API-Key": gw.adminKey}})]
  ];

  it.each(cases)("answer alike: %s", async (_name, make) => {
    const {body, headers} = make();
    const direct = await post(body, headers, false);
    const framework = await post(body, headers, true);
    expect(comparable(direct)).toEqual(comparable(framework));
    expect(direct.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("echoes the client's X-Request-Id and logs the request under it with the key's id", async () => {
    const answer = await post(JSON.stringify({recipient_uuid: alice, message: "traced", priority: "info"}), {...json, "X-API-Key": gw.adminKey, "X-Request-Id": "trace-4711"}, false);
    expect(answer.status).toBe(202);
    expect(answer.headers["x-request-id"]).toBe("trace-4711");
    const keyId = gw.adminKey.split("_")[1];
    const line = await eventually(
      "the request's log line",
      () => gw.logLines.map((text) => JSON.parse(text)).find((entry) => entry.msg === "http" && entry.request_id === "trace-4711"),
      (entry) => entry !== undefined
    );
    expect(line).toMatchObject({method: "POST", path: SEND_PATH, status: 202, key_id: keyId});
  });

  it("takes the request id from one definition on both routes", async () => {
    const body = JSON.stringify({recipient_uuid: alice, message: "traced both ways", priority: "info"});
    const headers = {...json, "X-API-Key": gw.adminKey, "X-Request-Id": "trace-4712"};
    const [direct, framework] = [await post(body, headers, false), await post(body, headers, true)];
    expect([direct.headers["x-request-id"], framework.headers["x-request-id"]]).toEqual(["trace-4712", "trace-4712"]);
    const fresh = await post(body, {...json, "X-API-Key": gw.adminKey}, true);
    expect(fresh.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("stores nothing when the client hangs up in the middle of the body, and serves the next request", async () => {
    const before = await journalCounts(gw);
    const url = new URL(gw.url);
    await new Promise<void>((resolve) => {
      const request = http.request({host: url.hostname, port: url.port, method: "POST", path: SEND_PATH, headers: {...json, "X-API-Key": gw.adminKey, "Content-Length": 500}});
      request.on("error", () => resolve());
      request.write(JSON.stringify({recipient_uuid: alice}).slice(0, 20), () => setTimeout(() => request.destroy(), 50));
      request.on("close", () => resolve());
    });
    const next = await post(JSON.stringify({recipient_uuid: alice, message: "after the hang-up", priority: "info"}), {...json, "X-API-Key": gw.adminKey}, false);
    expect(next.status).toBe(202);
    const after = await journalCounts(gw);
    expect(after.notifications - before.notifications).toBe(1);
  });
});

describe("DirectSendRoute.takes", () => {
  const route = new DirectSendRoute(null as never);
  const plain = {"content-type": "application/json", "content-length": "120", "x-api-key": "klx_a_b"};
  const takes = (method: string, url: string, headers: Record<string, string>) => route.takes({method, url, headers} as unknown as IncomingMessage);

  it("takes a plain POST with a key and a sized JSON body", () => {
    expect(takes("POST", SEND_PATH, plain)).toBe(true);
    expect(takes("POST", SEND_PATH, {...plain, "content-type": "Application/JSON; charset=utf-8"})).toBe(true);
    expect(takes("POST", SEND_PATH, {...plain, "content-length": String(64 * 1024)})).toBe(true);
  });

  it.each([
    ["another method", "GET", SEND_PATH, plain],
    ["a query string", "POST", `${SEND_PATH}?x=1`, plain],
    ["a trailing slash", "POST", `${SEND_PATH}/`, plain],
    ["no key (a dashboard session, or a 401 for the framework to word)", "POST", SEND_PATH, {"content-type": "application/json", "content-length": "120"}],
    ["another media type", "POST", SEND_PATH, {...plain, "content-type": "text/plain"}],
    ["another charset", "POST", SEND_PATH, {...plain, "content-type": "application/json; charset=latin1"}],
    ["an empty body", "POST", SEND_PATH, {...plain, "content-length": "0"}],
    ["a body over 64 KiB", "POST", SEND_PATH, {...plain, "content-length": String(64 * 1024 + 1)}],
    ["a chunked body", "POST", SEND_PATH, {"content-type": "application/json", "transfer-encoding": "chunked", "x-api-key": "k"}],
    ["a compressed body", "POST", SEND_PATH, {...plain, "content-encoding": "gzip"}]
  ])("leaves the framework %s", (_name, method, url, headers) => {
    expect(takes(method, url, headers as Record<string, string>)).toBe(false);
  });
});
