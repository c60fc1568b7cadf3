import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await createRecipient(gw);
});
afterAll(() => gw.stop());

/** A create endpoint: a body to create with (`tag` keeps names apart), and the field shown only at creation. */
interface CreateEndpoint {
  path: string;
  body: (tag: string) => Record<string, unknown>;
  secret?: string;
  /** The name must be unique: a second create of the same body is refused with 409 rather than made. */
  uniqueName?: boolean;
}

const ENDPOINTS: CreateEndpoint[] = [
  {path: "/api/v1/recipients", body: (tag) => ({name: `Bob ${tag}`, email: "bob@example.com"})},
  {path: "/api/v1/groups", body: (tag) => ({name: `Shift ${tag}`, members: [alice]})},
  {path: "/api/v1/escalation-policies", body: (tag) => ({name: `Line ${tag}`, levels: [{targets: [alice]}]})},
  {path: "/api/v1/keys", body: (tag) => ({name: `sender ${tag}`, scopes: ["notifications:send"]}), secret: "key"},
  {
    path: "/api/v1/users",
    body: (tag) => ({name: `Maria ${tag}`, role: "operator", password: "a long passphrase"}),
    uniqueName: true
  },
  {path: "/api/v1/webhooks", body: (tag) => ({url: `http://127.0.0.1:9/${tag}`, events: ["*"]}), secret: "secret"},
  {
    path: "/api/v1/integrations",
    body: (tag) => ({name: `services ${tag}`, kind: "generic", target: alice}),
    secret: "secret"
  },
  // Takes no body; a body's bytes still count in the fingerprint, as on every route.
  {path: "/api/v1/backups", body: (tag) => ({tag})},
  {
    path: "/api/v1/heartbeats",
    body: (tag) => ({name: `press-${tag}`, period_seconds: 60, target: alice}),
    uniqueName: true
  }
];

const create = (path: string, body: unknown, idempotencyKey: string) =>
  gw.call("POST", path, {body, headers: {"Idempotency-Key": idempotencyKey}});

async function count(path: string): Promise<number> {
  const page = await gw.call("GET", `${path}?limit=200`);
  expect(page.status).toBe(200);
  return page.body.items.length;
}

describe.each(ENDPOINTS)("Idempotency-Key on POST $path", ({path, body, secret, uniqueName}) => {
  it("replays the first 201 for the same key and body, creating one resource; another key creates again", async () => {
    const before = await count(path);
    const first = await create(path, body("same"), `${path}-retry`);
    const again = await create(path, body("same"), `${path}-retry`);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    const {[secret ?? ""]: shownOnce, ...resource} = first.body;
    expect(again.body).toEqual(resource);
    if (secret) expect(shownOnce).toEqual(expect.any(String));
    expect(await count(path)).toBe(before + 1);

    const otherKey = await create(path, body("same"), `${path}-another`);
    expect(otherKey.headers.get("idempotent-replayed")).toBeNull();
    if (uniqueName) {
      expect(otherKey.status).toBe(409);
      expect(otherKey.body.code).toBe("conflict");
    } else {
      expect(otherKey.status).toBe(201);
      expect(otherKey.headers.get("location")).not.toBe(first.headers.get("location"));
      expect(await count(path)).toBe(before + 2);
    }
  });

  it("answers 422 idempotency_mismatch for the same key with another body, creating nothing", async () => {
    await create(path, body("first-body"), `${path}-reused`);
    const before = await count(path);
    const other = await create(path, body("second-body"), `${path}-reused`);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await count(path)).toBe(before);
  });
});

describe("Idempotency-Key on create endpoints", () => {
  it("refuses a key used on another endpoint rather than answering with that endpoint's resource", async () => {
    const body = {name: "Carol", email: "carol@example.com"};
    expect((await create("/api/v1/recipients", body, "cross-endpoint")).status).toBe(201);
    const other = await create("/api/v1/groups", {name: "Carol", members: [alice]}, "cross-endpoint");
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
  });

  it("is declared in the OpenAPI document on every create operation, with its 409 and 422", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body;
    for (const {path} of ENDPOINTS) {
      const operation = spec.paths[path].post;
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({in: "header", name: "Idempotency-Key", required: false})
      );
      expect(operation.responses["409"].description).toContain("Idempotency-Key");
      expect(operation.responses["422"].description).toContain("Idempotency-Key");
    }
  });

  it("refuses a malformed key with 400 before creating anything", async () => {
    const before = await count("/api/v1/recipients");
    const answer = await create("/api/v1/recipients", {name: "Dan", email: "dan@example.com"}, "bad key");
    expect(answer.status).toBe(400);
    expect(await count("/api/v1/recipients")).toBe(before);
  });

  it("lets exactly one of many concurrent duplicates create; the rest are replays or 409", async () => {
    const before = await count("/api/v1/recipients");
    const body = {name: "Erin", email: "erin@example.com"};
    const answers = await Promise.all(Array.from({length: 10}, () => create("/api/v1/recipients", body, "burst")));
    const fresh = answers.filter((answer) => answer.status === 201 && !answer.headers.get("idempotent-replayed"));
    const conflicts = answers.filter((answer) => answer.status === 409);
    expect(fresh).toHaveLength(1);
    for (const conflict of conflicts) expect(conflict.body.code).toBe("idempotency_in_flight");
    expect(await count("/api/v1/recipients")).toBe(before + 1);
  });

  it("remembers a creation across a restart", async () => {
    const body = {name: "Frank", email: "frank@example.com"};
    const first = await create("/api/v1/recipients", body, "durable-create");
    await gw.restart();
    const again = await create("/api/v1/recipients", body, "durable-create");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });
});
