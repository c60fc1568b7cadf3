import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, journalCounts, startTestGateway, type TestGateway} from "../support/gateway.js";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await createRecipient(gw);
});
afterAll(() => gw.stop());

const send = (body: unknown, key: string, headers: Record<string, string> = {}, apiKey?: string) =>
  gw.call("POST", "/api/v1/notifications/send", {body, key: apiKey, headers: {"Idempotency-Key": key, ...headers}});

describe("Idempotency-Key", () => {
  it("replays the first answer for the same key and body, marked Idempotent-Replayed", async () => {
    const body = {recipient_uuid: alice, message: "compressor 2 tripped", priority: "critical"};
    const first = await send(body, "retry-1");
    const before = await journalCounts(gw);
    const again = await send(body, "retry-1");
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await journalCounts(gw)).toEqual(before);
  });

  it("replays the first answer even when the replay asks for another form", async () => {
    const body = {recipient_uuid: alice, message: "replay form", priority: "high"};
    const first = await send(body, "retry-2", {Prefer: "return=representation"});
    const again = await send(body, "retry-2");
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
  });

  it("answers 422 when the key is reused with a different body, storing nothing", async () => {
    await send({recipient_uuid: alice, message: "one", priority: "high"}, "retry-3");
    const before = await journalCounts(gw);
    const other = await send({recipient_uuid: alice, message: "two", priority: "high"}, "retry-3");
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await journalCounts(gw)).toEqual(before);
  });

  it("scopes keys to the API key that sent them", async () => {
    const created = await gw.call("POST", "/api/v1/keys", {
      body: {name: "second sender", scopes: ["notifications:send"]}
    });
    const body = {recipient_uuid: alice, message: "same key, other sender", priority: "high"};
    const first = await send(body, "shared-name");
    const second = await send(body, "shared-name", {}, created.body.key);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(second.body.notification_uuid).not.toBe(first.body.notification_uuid);
  });

  it("lets exactly one of many concurrent duplicates through; the rest are replays or 409", async () => {
    const body = {recipient_uuid: alice, message: "concurrent duplicates", priority: "critical"};
    const before = (await journalCounts(gw)).notifications;
    const answers = await Promise.all(Array.from({length: 25}, () => send(body, "burst-1")));
    const fresh = answers.filter(
      (answer) => answer.status === 202 && answer.headers.get("idempotent-replayed") === null
    );
    const replays = answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true");
    const conflicts = answers.filter((answer) => answer.status === 409);
    expect(fresh).toHaveLength(1);
    expect(replays.length + conflicts.length).toBe(24);
    for (const conflict of conflicts) expect(conflict.body.code).toBe("idempotency_in_flight");
    for (const replay of replays) expect(replay.body).toEqual(fresh[0].body);
    expect((await journalCounts(gw)).notifications).toBe(before + 1);
  });

  it("remembers answers across a restart", async () => {
    const body = {recipient_uuid: alice, message: "before the restart", priority: "high"};
    const first = await send(body, "durable-1");
    await gw.restart();
    const again = await send(body, "durable-1");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });
});
