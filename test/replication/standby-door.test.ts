import {readFileSync} from "node:fs";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startBox, type Box} from "../../src/boot/standby.js";
import {settingsWith} from "../../src/settings/load-settings.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";

// A standby serves /healthz and /readyz and refuses everything else with 503 `standby`, a
// Retry-After and a Link to the active. Until 2026-11-28 it answered from a front of its own on
// node:http; the answers it gave then (status, headers, content type, bodies) were recorded into
// standby-door.answers.json from that front, and the one door must still give them, apart from
// per-request headers and the seconds that pass.

const PEER = "http://127.0.0.1:9";
const lines: string[] = [];
let box: Box;

beforeAll(async () => {
  box = await startBox(
    settingsWith({
      host: "127.0.0.1",
      port: 0,
      data_dir: tempDir(),
      replication: {
        role: "standby",
        box_name: "klaxon-b",
        // No active answers there, and the copy stays empty: it stands by and never takes over.
        peer: PEER,
        replica: tempDir(),
        incoming: tempDir(),
        litestream: requireLitestream(),
        takeover_after_seconds: 600
      }
    }),
    {logger: createLogger("debug", (line) => lines.push(line))}
  );
});
afterAll(async () => {
  await box.stop();
  endOrphanedLitestreams();
});

interface Request {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

const KEY = {"X-API-Key": "klx_0123456789abcdef0123456789abcdef"};
const JSON_TYPE = {"Content-Type": "application/json"};

/** Every kind of request a standby meets: its own two routes, and the gateway's, well formed or not. */
const CASES: Record<string, Request> = {
  liveness: {method: "GET", path: "/healthz"},
  "liveness with a query": {method: "GET", path: "/healthz?verbose=1"},
  readiness: {method: "GET", path: "/readyz"},
  "readiness with a key": {method: "GET", path: "/readyz", headers: KEY},
  "liveness by HEAD": {method: "HEAD", path: "/healthz"},
  "liveness by POST": {method: "POST", path: "/healthz", body: "{}", headers: JSON_TYPE},
  "liveness with a trailing slash": {method: "GET", path: "/healthz/"},
  "an alert": {
    method: "POST",
    path: "/api/v1/notifications/send",
    body: JSON.stringify({recipient_uuid: "r-1", message: "disk full", priority: "high"}),
    headers: {...JSON_TYPE, ...KEY, "Idempotency-Key": "press-7"}
  },
  "an alert that is not JSON": {
    method: "POST",
    path: "/api/v1/notifications/send",
    body: "{not json",
    headers: {...JSON_TYPE, ...KEY}
  },
  "an alert as a form": {
    method: "POST",
    path: "/api/v1/notifications/send",
    body: "message=disk+full",
    headers: {"Content-Type": "application/x-www-form-urlencoded", ...KEY}
  },
  "an alert over 64 KiB": {
    method: "POST",
    path: "/api/v1/notifications/send",
    body: JSON.stringify({message: "x".repeat(70_000)}),
    headers: {...JSON_TYPE, ...KEY}
  },
  "a list": {method: "GET", path: "/api/v1/notifications?limit=5", headers: KEY},
  "an acknowledgement": {method: "POST", path: "/api/v1/notifications/notif_1/ack", headers: KEY},
  "a deletion": {method: "DELETE", path: "/api/v1/keys/key_1", headers: KEY},
  "a preflight": {method: "OPTIONS", path: "/api/v1/notifications"},
  "a ping": {method: "POST", path: "/ping/abc", body: "done", headers: {"Content-Type": "text/plain"}},
  "an integration event": {
    method: "POST",
    path: "/api/v1/integrations/int_1/events?token=t",
    body: "{}",
    headers: JSON_TYPE
  },
  "a tail hand-over": {method: "POST", path: "/api/v1/replication/tail", body: "{}", headers: JSON_TYPE},
  "the metrics": {method: "GET", path: "/metrics"},
  "the dashboard": {method: "GET", path: "/"},
  "the API document": {method: "GET", path: "/api/v1/openapi.json"},
  "the API browser": {method: "GET", path: "/docs"},
  "an error code": {method: "GET", path: "/problems/standby"},
  "no such route": {method: "GET", path: "/no/such/route"}
};

// Dates, connection handling and request ids differ per request by nature; the seconds since the active was heard pass.
const VARYING = new Set(["date", "connection", "keep-alive", "x-request-id"]);

async function answer({method, path, body, headers}: Request) {
  const response = await fetch(box.url() + path, {method, body, headers, signal: AbortSignal.timeout(5000)});
  const text = await response.text();
  return {
    status: response.status,
    headerNames: [...response.headers.keys()].filter((name) => !VARYING.has(name)).sort(),
    contentType: response.headers.get("content-type"),
    link: response.headers.get("link")?.replace(box.url(), "BOX"),
    retryAfter: response.headers.get("retry-after"),
    body: text.replace(/"active_silent_seconds":[0-9.e-]+/, '"active_silent_seconds":"N"')
  };
}

/** The answers of the standby's own front (main at 837ee22), written by this file before the front was taken out. */
const RECORDED = JSON.parse(readFileSync(new URL("standby-door.answers.json", import.meta.url), "utf8")) as Record<
  string,
  unknown
>;

describe("a standby answers through the one door as it did through its own front", () => {
  const answers: Record<string, unknown> = {};
  beforeAll(async () => {
    for (const [name, request] of Object.entries(CASES)) answers[name] = await answer(request);
  });

  it.each(Object.keys(CASES))("%s: as recorded", (name) => {
    expect(answers[name]).toEqual(RECORDED[name]);
  });

  it("says it is the standby, how far its copy is behind, and where the active is", () => {
    expect(JSON.parse((answers.liveness as {body: string}).body)).toEqual({
      status: "ok",
      role: "standby",
      box: "klaxon-b",
      epoch: null,
      lag_seconds: null,
      active_box: null,
      active_silent_seconds: "N"
    });
  });

  it("logs each answer in the gateway's one request log, with its request id", () => {
    const logged = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "http");
    expect(logged).toContainEqual(expect.objectContaining({method: "GET", path: "/healthz", status: 200}));
    expect(logged).toContainEqual(
      expect.objectContaining({
        method: "POST",
        path: "/api/v1/notifications/send",
        status: 503,
        request_id: expect.any(String)
      })
    );
  });
});
