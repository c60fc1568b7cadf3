import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ERROR_CATALOGUE} from "../../src/api/errors/catalogue.js";
import {MIGRATIONS} from "../../src/store/journal/migrations.js";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
});
afterAll(() => gw.stop());

describe("audit log", () => {
  it("records accepted alerts, state changes and admin changes with the key that caused them", async () => {
    const key = await gw.call("POST", "/api/v1/keys", {
      body: {name: "plc gateway", scopes: ["notifications:send", "notifications:ack"]}
    });
    const alice = await createRecipient(gw);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      key: key.body.key,
      body: {recipient_uuid: alice, message: "audit me", priority: "high", source: "plc-4"}
    });
    await gw.gateway.services.runner.idle();
    await gw.call("POST", `/api/v1/notifications/${sent.body.notification_uuid}/ack`, {key: key.body.key});
    const log = await gw.call("GET", "/api/v1/audit?limit=200");
    expect(log.status).toBe(200);
    const actions = log.body.items.map((entry: {action: string}) => entry.action);
    expect(actions.slice(0, 4)).toEqual([
      "notification.acknowledged",
      "notification.accepted",
      "recipient.created",
      "api_key.created"
    ]);
    const [acked, accepted] = log.body.items;
    expect(accepted).toMatchObject({
      actor: {type: "api_key", id: key.body.id},
      source: "plc-4",
      subject: {type: "notification", id: sent.body.notification_uuid},
      detail: {priority: "high"}
    });
    expect(acked).toMatchObject({actor: {type: "api_key", id: key.body.id}, detail: {from: "notifying", via: "api"}});
    const adminKeyId = gw.adminKey.split("_")[1];
    // "Who" is named, not only by the key's id.
    expect(log.body.items.find((entry: {action: string}) => entry.action === "recipient.created").actor).toEqual({
      type: "api_key",
      id: adminKeyId,
      name: "initial admin"
    });
    expect(acked.actor.name).toBe("plc gateway");
    expect(log.body.items[log.body.items.length - 1]).toMatchObject({
      action: "api_key.created",
      actor: {type: "system", id: null},
      detail: {name: "initial admin"}
    });
  });

  it("pages with a cursor and filters by action", async () => {
    const first = await gw.call("GET", "/api/v1/audit?limit=2");
    const second = await gw.call("GET", `/api/v1/audit?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items[0].seq).toBeLessThan(first.body.items[1].seq);
    const filtered = await gw.call("GET", "/api/v1/audit?action=recipient.created");
    expect(filtered.body.items.every((entry: {action: string}) => entry.action === "recipient.created")).toBe(true);
    expect((await gw.call("GET", "/api/v1/audit?cursor=x")).status).toBe(400);
  });
});

describe("documentation and health", () => {
  // First in this file to read a document: /docs must not depend on /api/v1/openapi.json having been read.
  it("gives /docs the same document, errors as problem+json, before the API's copy was ever read", async () => {
    const docs = await fetch(`${gw.url}/docs/openapi.json`);
    expect(docs.status).toBe(200);
    const spec = (await docs.json()) as {
      paths: Record<string, Record<string, {responses: Record<string, {content: object}>}>>;
    };
    expect(Object.keys(spec.paths["/api/v1/notifications/send"].post.responses["400"].content)).toEqual([
      "application/problem+json"
    ]);
    expect((await gw.call("GET", "/api/v1/openapi.json", {key: null})).body).toEqual(spec);
  });

  it("serves the OpenAPI document with the key scheme and every error answer documented", async () => {
    const answer = await gw.call("GET", "/api/v1/openapi.json", {key: null});
    expect(answer.status).toBe(200);
    const spec = answer.body;
    expect(spec.openapi).toBe("3.0.3");
    expect(spec.components.securitySchemes.api_key).toMatchObject({type: "apiKey", in: "header", name: "X-API-Key"});
    expect(spec.components.securitySchemes.api_key.description).toContain("Authorization: Bearer");
    const send = spec.paths["/api/v1/notifications/send"].post;
    expect(Object.keys(send.responses).sort()).toEqual([
      "200",
      "202",
      "400",
      "401",
      "403",
      "409",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503"
    ]);
    expect(send.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/SendNotificationModel");
    expect(spec.components.schemas.SendNotificationModel.required.sort()).toEqual([
      "message",
      "priority",
      "recipient_uuid"
    ]);
    expect(spec.components.schemas.SendNotificationModel.additionalProperties).toBe(false);
    for (const [path, operations] of Object.entries<
      Record<string, {security?: unknown; responses: Record<string, unknown>}>
    >(spec.paths)) {
      if (!path.startsWith("/api/v1/")) continue;
      for (const [method, operation] of Object.entries(operations)) {
        // Box to box: the pair's box token, not an API key, is the credential (docs/high-availability.md).
        const boxToBox = path.startsWith("/api/v1/replication/");
        expect(operation.security, `${method} ${path}`).toEqual(boxToBox ? [] : [{api_key: []}]);
        if (boxToBox) {
          expect(Object.keys(operation.responses), `${method} ${path}`).toContain("401");
          continue;
        }
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(["401", "403", "429", "500"])
        );
        if ((operation as {requestBody?: unknown}).requestBody) {
          expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
            expect.arrayContaining(["400", "413", "415"])
          );
        }
        const parameters = (operation as {parameters?: Array<{in: string; name: string}>}).parameters ?? [];
        if (parameters.some((parameter) => parameter.in === "query"))
          expect(Object.keys(operation.responses), `${method} ${path}`).toContain("400");
      }
    }
  });

  it("serves the browsable documentation from the box itself", async () => {
    const page = await fetch(`${gw.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("swagger");
  });

  it("explains every error code at its problem type URI", async () => {
    for (const code of Object.keys(ERROR_CATALOGUE)) {
      const answer = await gw.call("GET", `/problems/${code}`, {key: null});
      expect(answer.status, code).toBe(200);
      expect(answer.body).toMatchObject({
        code,
        type: `/problems/${code}`,
        status: ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status
      });
    }
    expect((await gw.call("GET", "/problems/no_such_code", {key: null})).status).toBe(404);
  });

  it("answers an unknown route with a problem document", async () => {
    const answer = await gw.call("GET", "/api/v1/nothing-here");
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("route_not_found");
    expect(answer.headers.get("x-powered-by")).toBeNull();
    const listed = await gw.call("GET", "/api/v1/notifications");
    expect(listed.headers.get("etag")).toBeNull();
    expect(listed.headers.get("x-request-id")).toMatch(/\S/);
  });

  it("answers a method a known path does not serve with 405 and the methods it does serve", async () => {
    const cases: Array<[string, string, string]> = [
      ["PUT", "/api/v1/recipients/7f1c2b9e-0d4a-4e8b-9a55-1b2c3d4e5f60", "DELETE, GET, HEAD, PATCH"],
      // As in the OpenAPI document, the send path is its own resource, not also /api/v1/notifications/{id}.
      ["DELETE", "/api/v1/notifications/send", "POST"],
      ["PATCH", "/API/v1/Recipients/", "GET, HEAD, POST"],
      ["POST", "/healthz", "GET, HEAD"]
    ];
    for (const [method, path, allow] of cases) {
      const answer = await gw.call(method, path, {body: method === "GET" ? undefined : {}});
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body).toMatchObject({
        code: "method_not_allowed",
        status: 405,
        type: "/problems/method_not_allowed",
        instance: path
      });
      expect(answer.body.detail).toContain(allow);
    }
    // A path no method serves stays 404, ids or not.
    expect((await gw.call("PUT", "/api/v1/recipients/x/y", {body: {}})).status).toBe(404);
    expect((await gw.call("GET", "/api/v1/notifications/x/acknowledge")).status).toBe(404);
  });

  it("reports liveness and readiness without a key, with channel states and no secrets", async () => {
    expect((await gw.call("GET", "/healthz", {key: null})).body).toEqual({status: "ok"});
    const ready = await gw.call("GET", "/readyz", {key: null});
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({status: "ready", journal: {can_commit: true}, counts: {outbox_pending: 0}});
    const detailed = await gw.call("GET", "/readyz");
    expect(detailed.body).toMatchObject({journal: {schema_version: MIGRATIONS.length}, outbox: {pending: 0}});
    expect(ready.body.channels.map((c: {channel: string}) => c.channel)).toEqual([
      "telegram_voice",
      "voice_call",
      "sms",
      "email"
    ]);
  });
});
