import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import {integrationRig} from "../support/integration-rig.js";
import {pointers} from "../support/problem-pointers.js";

// Creating, changing and documenting integrations, and who may; what their events do is in
// integrations-events.test.ts, how events authenticate in integrations-event-auth.test.ts.
const {start} = integrationRig();
let gw: TestGateway;
let target: string;
let sender: string;

beforeAll(async () => {
  ({gw, target, sender} = await start());
});
afterAll(() => gw.stop());

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
