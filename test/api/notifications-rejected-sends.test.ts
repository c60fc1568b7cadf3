import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {journalCounts, type TestGateway} from "../support/gateway.js";
import {notificationRig} from "../support/notification-rig.js";

// Sends refused before anything is stored: each answers a problem document naming what is wrong.
const {start, send} = notificationRig();
let gw: TestGateway;

beforeAll(async () => {
  ({gw} = await start());
});
afterAll(() => gw.stop());

describe("rejected sends", () => {
  const cases: Array<
    [string, {body?: unknown; raw?: string; headers?: Record<string, string>}, number, string, string | null]
  > = [
    [
      "an unknown field",
      {
        body: {
          recipient_id: "x",
          recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b",
          message: "m",
          priority: "high"
        }
      },
      400,
      "invalid_request",
      "/recipient_id"
    ],
    [
      "a missing priority",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m"}},
      400,
      "invalid_request",
      "/priority"
    ],
    [
      "an unknown priority",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "urgent"}},
      400,
      "invalid_request",
      "/priority"
    ],
    [
      "a blank message",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "   ", priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a message over 4000 characters",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "x".repeat(4001), priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a number where a string belongs",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: 42, priority: "high"}},
      400,
      "invalid_request",
      "/message"
    ],
    [
      "a link that is not http(s)",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high", link: "ftp://x"}},
      400,
      "invalid_request",
      "/link"
    ],
    [
      "a recipient_uuid that is not a UUID",
      {body: {recipient_uuid: "bob", message: "m", priority: "high"}},
      400,
      "invalid_request",
      "/recipient_uuid"
    ],
    ["a JSON array body", {body: [1, 2]}, 400, "invalid_request", ""],
    [
      "malformed JSON",
      {raw: '{"message": ', headers: {"Content-Type": "application/json"}},
      400,
      "malformed_json",
      null
    ],
    ["no body", {}, 400, "invalid_request", ""],
    [
      "a text/plain body",
      {raw: "disk full", headers: {"Content-Type": "text/plain"}},
      415,
      "unsupported_media_type",
      null
    ],
    [
      "a body over 64 KiB",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "x".repeat(70_000), priority: "high"}},
      413,
      "payload_too_large",
      null
    ],
    [
      "an unknown recipient",
      {body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high"}},
      422,
      "unknown_reference",
      "/recipient_uuid"
    ],
    [
      "a malformed Idempotency-Key",
      {
        body: {recipient_uuid: "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b", message: "m", priority: "high"},
        headers: {"Idempotency-Key": "x".repeat(256)}
      },
      400,
      "invalid_request",
      null
    ]
  ];

  it.each(cases)(
    "refuses %s with a problem document and stores nothing",
    async (_name, request, status, code, pointer) => {
      const before = await journalCounts(gw);
      const answer = await gw.call("POST", "/api/v1/notifications/send", request);
      expect(answer.status).toBe(status);
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({
        type: `/problems/${code}`,
        status,
        code,
        instance: "/api/v1/notifications/send"
      });
      expect(answer.body.title).toEqual(expect.any(String));
      expect(answer.body.detail).toEqual(expect.any(String));
      expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+/);
      if (pointer !== null) expect(answer.body.errors.map((e: {pointer: string}) => e.pointer)).toContain(pointer);
      expect(await journalCounts(gw)).toEqual(before);
    }
  );

  it("names every problem of a body at once", async () => {
    const answer = await send({recipient_id: "x", message: "", priority: "urgent"});
    expect([...new Set(answer.body.errors.map((e: {pointer: string}) => e.pointer))].sort()).toEqual(
      ["/message", "/priority", "/recipient_id", "/recipient_uuid"].sort()
    );
    expect(answer.body.errors.find((e: {pointer: string}) => e.pointer === "/priority").detail).toBe(
      "must be one of: critical, high, medium, low, info"
    );
  });
});
