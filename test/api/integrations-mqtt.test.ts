import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {pointers} from "../support/problem-pointers.js";

// An mqtt integration's own fields in the API: what is required and refused, what the answers
// show (never the password), and what a merge patch does to them. Nothing listens on the brokers
// named here: the clients keep retrying in the background, which these tests do not look at.
let gw: TestGateway;
let target: string;

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  target = await createRecipient(gw, {name: "Ops on call"});
});
afterAll(() => gw.stop());

const BROKER = {broker_url: "mqtt://127.0.0.1:1", topics: ["plant/+/alarms"]};
const create = (fields: Record<string, unknown>) =>
  gw.call("POST", "/api/v1/integrations", {body: {name: "plant broker", kind: "mqtt", target, ...fields}});

describe("mqtt integration fields", () => {
  it.each([
    [{}, ["/broker_url", "/topics"]],
    [{...BROKER, broker_url: "http://broker.plant.lan"}, ["/broker_url"]],
    [{...BROKER, broker_url: "mqtt://klaxon:secret@broker.plant.lan"}, ["/broker_url"]],
    [{...BROKER, topics: []}, ["/topics"]],
    [{...BROKER, topics: ["plant/li+ne", "plant/#/x"]}, ["/topics/0", "/topics/1"]],
    [{...BROKER, password: "p4ss"}, ["/username"]],
    [{...BROKER, tls_ca_file: "certs/ca.pem"}, ["/tls_ca_file"]],
    [{...BROKER, heartbeat_topics: [{topic: "plc/alive", name: "PLC 1"}]}, ["/heartbeat_topics/0/name"]],
    [{...BROKER, json: {action: "/state", fire_values: [], resolve_values: []}}, ["/json/fire_values"]]
  ])("refuses %j at %j", async (fields, expected) => {
    const answer = await create(fields);
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toEqual(expected);
  });

  it("refuses a client id another integration uses on the same broker, which would take each other's session over", async () => {
    const first = await create({...BROKER, client_id: "plc-gateway-1"});
    expect(first.status).toBe(201);
    const same = await create({...BROKER, broker_url: "mqtt://127.0.0.1:1/", client_id: "plc-gateway-1"});
    expect(same.status).toBe(400);
    expect(pointers(same)).toEqual(["/client_id"]);
    // A client id left to its default is taken too.
    const plain = await create(BROKER);
    const copying = await create({...BROKER, client_id: plain.body.client_id});
    expect(pointers(copying)).toEqual(["/client_id"]);
    const otherBroker = await create({...BROKER, broker_url: "mqtt://127.0.0.2:1", client_id: "plc-gateway-1"});
    expect(otherBroker.status).toBe(201);
    // Its own client id is no conflict when the integration itself is patched.
    expect((await gw.call("PATCH", `/api/v1/integrations/${first.body.id}`, {body: {name: "renamed"}})).status).toBe(
      200
    );
  });

  it("refuses a JSON mapping whose pointer is not one, by the schema", async () => {
    const answer = await create({...BROKER, json: {action: "state", fire_values: ["ALARM"], resolve_values: []}});
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toEqual(["/json/action"]);
  });

  it("refuses MQTT fields on another kind", async () => {
    const answer = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "webhook", kind: "generic", target, ...BROKER}
    });
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toEqual(["/broker_url", "/topics"]);
  });

  it("never shows the password, keeps it through a patch that leaves it out, and removes it on null", async () => {
    const created = await create({...BROKER, username: "klaxon", password: "Mq77-secret-pass"});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      broker_url: "mqtt://127.0.0.1:1",
      topics: ["plant/+/alarms"],
      username: "klaxon",
      password_set: true,
      client_id: `klaxon-${created.body.id.slice(-16)}`,
      tls_ca_file: null,
      json: null,
      heartbeat_topics: []
    });
    expect(JSON.stringify(created.body)).not.toContain("Mq77-secret-pass");
    const path = `/api/v1/integrations/${created.body.id}`;

    const renamed = await gw.call("PATCH", path, {body: {topics: ["plant/#"]}});
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({topics: ["plant/#"], password_set: true});
    const stored = JSON.parse(readFileSync(join(gw.dataDir, "config.json"), "utf8")).integrations.find(
      (integration: {id: string}) => integration.id === created.body.id
    );
    expect(stored.password).toBe("Mq77-secret-pass");

    const cleared = await gw.call("PATCH", path, {body: {password: null, username: null}});
    expect(cleared.body).toMatchObject({username: null, password_set: false});
    const listed = (await gw.call("GET", "/api/v1/integrations")).body.items;
    expect(JSON.stringify(listed)).not.toContain("Mq77-secret-pass");
  });

  it("lists each mqtt integration's broker on /readyz without making the gateway unready", async () => {
    const created = await create(BROKER);
    const ready = await gw.call("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.mqtt_brokers).toContainEqual(
      expect.objectContaining({integration_id: created.body.id, broker_url: "mqtt://127.0.0.1:1", connected: false})
    );
    expect(ready.body.disk.path).toBe(gw.dataDir);

    // Anyone may ask: the status, reasons, channels and counts; no broker URL, no data path.
    const open = await gw.call("GET", "/readyz", {key: null});
    expect(open.status).toBe(200);
    expect(open.body).toMatchObject({status: "ready", ready: true, reasons: [], journal: {can_commit: true}});
    const down = ready.body.mqtt_brokers.filter((broker: {connected: boolean}) => !broker.connected).length;
    expect(open.body.counts).toMatchObject({mqtt_brokers: ready.body.mqtt_brokers.length, mqtt_brokers_down: down});
    expect(Object.keys(open.body).sort()).toEqual([
      "channels",
      "counts",
      "journal",
      "ready",
      "reasons",
      "status",
      "undeliverable"
    ]);
    expect(JSON.stringify(open.body)).not.toMatch(/127\.0\.0\.1:1|mqtt:\/\/|details/);
    expect(JSON.stringify(open.body)).not.toContain(gw.dataDir);
    // A key that fails is refused, not answered with less.
    expect((await gw.call("GET", "/readyz", {key: "not-a-key"})).status).toBe(401);
  });
});
