import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import type {IntegrationRecord} from "../../src/store/config/config-store.js";
import type {DeviceMessage} from "../../src/services/integrations/intake/device-intake.js";
import {genericEventActions, textRuleActions} from "../../src/services/integrations/intake/integration-payloads.js";
import {TimedRegex} from "../../src/lib/timed-regex.js";
import {KEPT_PER_INTEGRATION} from "../../src/store/journal/integration-stats.repository.js";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {pointers} from "../support/problem-pointers.js";

// The shared part of the device integrations (email, MQTT, SNMP traps): their kinds and rules in
// the API, and the intake every transport hands its messages to, driven here as a listener would.
const clock = new ManualClock(Date.parse("2026-03-02T09:00:00.000Z"));
let gw: TestGateway;
let target: string;

const ZERO_STATS = {
  received: 0,
  accepted: 0,
  refused: 0,
  unmapped: 0,
  last_event_at: null,
  last_error: null,
  last_error_at: null
};
const upsRules = [
  {
    field: "subject",
    match: "regex",
    pattern: "UPS (\\w+) on battery",
    action: "fire",
    alert_key: "ups-{1}",
    priority: "critical"
  },
  {field: "subject", match: "regex", pattern: "UPS (\\w+) on mains", action: "resolve", alert_key: "ups-{1}"}
];

beforeAll(async () => {
  gw = await startTestGateway({...ALL_CHANNELS_CONFIGURED, inbound_email: {domain: "alerts.plant.lan"}}, {clock});
  target = await createRecipient(gw, {name: "Ops on call"});
});
afterAll(() => gw.stop());

async function createIntegration(fields: Record<string, unknown>) {
  const answer = await gw.call("POST", "/api/v1/integrations", {body: {target, ...fields}});
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

function record(id: string): IntegrationRecord {
  return gw.gateway.config.data.integrations.find((item) => item.id === id) as IntegrationRecord;
}

const mail = (summary: string, body = "", origin = "ups@plant.lan"): DeviceMessage => ({
  transport: "email",
  origin,
  summary,
  body,
  size: summary.length + body.length
});

const regex = new TimedRegex();
const actionsFor = (integration: IntegrationRecord, message: DeviceMessage) =>
  textRuleActions(
    integration,
    {
      fields: {sender: message.origin, subject: message.summary, body: message.body},
      title: message.summary,
      text: message.body
    },
    (pattern, text) => regex.match(pattern, text)
  ).actions;

describe("device integration kinds", () => {
  it("creates an email integration with rules: its address, its rules and zero counters", async () => {
    const created = await createIntegration({name: "UPS mails", kind: "email", rules: upsRules});
    expect(created.address).toMatch(/^[0-9a-f]{24}@alerts\.plant\.lan$/);
    expect(created.rules).toEqual(upsRules);
    expect(created.stats).toEqual(ZERO_STATS);
    const read = await gw.call("GET", `/api/v1/integrations/${created.id}`);
    expect(read.body).toMatchObject({address: created.address, rules: upsRules, stats: ZERO_STATS});
    const rotated = await gw.call("POST", `/api/v1/integrations/${created.id}/rotate-credentials`);
    expect(rotated.body.address).toMatch(/^[0-9a-f]{24}@alerts\.plant\.lan$/);
    expect(rotated.body.address).not.toBe(created.address);
  });

  it("shows no address or rules on the other kinds, and counters on all", async () => {
    for (const kind of ["generic", "alertmanager", "mqtt", "snmp_trap"]) {
      // A trap integration needs a community (or v3 users) to say which traps are its own.
      const trap = kind === "snmp_trap" ? {community: "hall-b"} : {};
      // An mqtt integration needs its broker and topic filters (nothing listens on port 1: it keeps retrying).
      const mqtt = kind === "mqtt" ? {broker_url: "mqtt://127.0.0.1:1", topics: ["plant/#"]} : {};
      const created = await createIntegration({name: `a ${kind}`, kind, ...trap, ...mqtt});
      expect(created.address).toBeNull();
      expect(created.stats).toEqual(ZERO_STATS);
      expect("rules" in created).toBe(kind === "mqtt");
    }
  });

  it("mints no secret and no events URL for a modbus or opcua integration, which take no events", async () => {
    const sender = await createIntegration({name: "a sender", kind: "generic"});
    expect(sender.secret).toMatch(/^whsec_/);
    expect(sender.url).toMatch(/\/events\?token=/);
    const devices = {
      // Nothing answers on port 1: the links keep retrying, which this test does not mind.
      modbus: {
        modbus: {host: "127.0.0.1", port: 1},
        points: [{name: "oil", table: "holding_register", address: 1, type: "uint16"}]
      },
      opcua: {
        opcua: {endpoint_url: "opc.tcp://127.0.0.1:1", security_mode: "None", security_policy: "None", alarms: true},
        points: []
      }
    };
    for (const [kind, device] of Object.entries(devices)) {
      const created = await createIntegration({name: `a ${kind}`, kind, ...device});
      expect(created).not.toHaveProperty("secret");
      expect(created.url).toBeNull();
      expect((await gw.call("GET", `/api/v1/integrations/${created.id}`)).body.url).toBeNull();
      expect(record(created.id)).not.toHaveProperty("secret");
      expect(record(created.id)).not.toHaveProperty("url_token");
      const rotated = await gw.call("POST", `/api/v1/integrations/${created.id}/rotate-credentials`);
      expect(rotated.status).toBe(400);
      expect(rotated.body.detail).toContain(`a ${kind} integration has no credentials`);
      expect(record(created.id)).not.toHaveProperty("secret");
    }
  });

  it.each([
    [{kind: "generic", rules: []}, "/rules"],
    [{kind: "snmp_trap", rules: []}, "/rules"],
    [{kind: "email", rules: [{field: "topic", match: "contains", pattern: "x", action: "fire"}]}, "/rules/0/field"],
    [{kind: "mqtt", rules: [{field: "subject", match: "contains", pattern: "x", action: "fire"}]}, "/rules/0/field"],
    [
      {kind: "email", rules: [{field: "body", match: "regex", pattern: "(unclosed", action: "fire"}]},
      "/rules/0/pattern"
    ],
    [{kind: "email", rules: [{field: "body", match: "glob", pattern: "x", action: "fire"}]}, "/rules/0/match"],
    [{kind: "email", rules: [{field: "body", match: "contains", pattern: "", action: "fire"}]}, "/rules/0/pattern"],
    [{kind: "email", rules: [{field: "body", match: "contains", pattern: "x", action: "page"}]}, "/rules/0/action"]
  ])("refuses %j at %s", async (fields, pointer) => {
    const answer = await gw.call("POST", "/api/v1/integrations", {body: {name: "bad", target, ...fields}});
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toContain(pointer);
  });

  it("changes rules by merge patch, checked as at creation, and audits which fields changed", async () => {
    const created = await createIntegration({name: "NAS mails", kind: "email"});
    const bad = await gw.call("PATCH", `/api/v1/integrations/${created.id}`, {
      body: {rules: [{field: "subject", match: "regex", pattern: "[", action: "fire"}]}
    });
    expect(pointers(bad)).toEqual(["/rules/0/pattern"]);
    const patched = await gw.call("PATCH", `/api/v1/integrations/${created.id}`, {body: {rules: upsRules}});
    expect(patched.body.rules).toEqual(upsRules);
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${created.id}`);
    expect(audit.body.items[0]).toMatchObject({action: "integration.updated", detail: {fields: ["rules"]}});
    const cleared = await gw.call("PATCH", `/api/v1/integrations/${created.id}`, {body: {rules: null}});
    expect(cleared.body.rules).toEqual([]);
  });
});

describe("the device intake", () => {
  it("fires, merges and resolves through the rules, with the integration as the actor, and counts each", async () => {
    const {id} = await createIntegration({name: "UPS room 2", kind: "email", rules: upsRules});
    const intake = gw.gateway.deviceIntake;
    const onBattery = mail("UPS ups2 on battery", "Input voltage 0 V");
    const fired = await intake.take(record(id), onBattery, actionsFor(record(id), onBattery));
    expect(fired).toMatchObject({status: "accepted", results: [{alert_id: "ups-ups2", outcome: "created"}]});
    const uuid = fired.status === "accepted" ? fired.results[0].notification_uuid : null;
    const notification = await gw.call("GET", `/api/v1/notifications/${uuid}`);
    expect(notification.body).toMatchObject({
      priority: "critical",
      message: "UPS ups2 on battery: Input voltage 0 V",
      source: "UPS room 2"
    });
    const again = await intake.take(record(id), onBattery, actionsFor(record(id), onBattery));
    expect(again).toMatchObject({status: "accepted", results: [{outcome: "merged", notification_uuid: uuid}]});
    const onMains = mail("UPS ups2 on mains");
    const resolved = await intake.take(record(id), onMains, actionsFor(record(id), onMains));
    expect(resolved).toMatchObject({status: "accepted", results: [{outcome: "resolved", notification_uuid: uuid}]});
    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${uuid}`);
    expect(audit.body.items.map((item: {actor: unknown}) => item.actor)).toContainEqual({
      type: "integration",
      id,
      name: "UPS room 2"
    });
    const {stats} = (await gw.call("GET", `/api/v1/integrations/${id}`)).body;
    expect(stats).toEqual({...ZERO_STATS, received: 3, accepted: 3, last_event_at: "2026-03-02T09:00:00.000Z"});
  });

  it("keeps what maps to nothing and what is refused in the log, newest first, and pages through it", async () => {
    const {id} = await createIntegration({name: "NAS", kind: "email", rules: upsRules, unmapped: "keep"});
    const intake = gw.gateway.deviceIntake;
    for (let n = 1; n <= 3; n++) {
      clock.advance(1000);
      expect(await intake.take(record(id), mail(`Weekly report ${n}`, "all fine"), [])).toEqual({status: "unmapped"});
    }
    clock.advance(1000);
    intake.refuse(record(id), mail("(unreadable)", "--broken MIME"), "malformed MIME: no boundary");
    await gw.gateway.journal.write(() => undefined);
    const first = await gw.call("GET", `/api/v1/integrations/${id}/log?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([
      {
        id: expect.any(Number),
        received_at: "2026-03-02T09:00:04.000Z",
        outcome: "refused",
        origin: "ups@plant.lan",
        summary: "(unreadable)",
        body: "--broken MIME",
        size: 25,
        reason: "malformed MIME: no boundary"
      },
      expect.objectContaining({outcome: "unmapped", summary: "Weekly report 3", body: "all fine", reason: null})
    ]);
    const rest = await gw.call("GET", `/api/v1/integrations/${id}/log?cursor=${first.body.next_cursor}`);
    expect(rest.body.items.map((item: {summary: string}) => item.summary)).toEqual([
      "Weekly report 2",
      "Weekly report 1"
    ]);
    expect(rest.body.next_cursor).toBeNull();
    const {stats} = (await gw.call("GET", `/api/v1/integrations/${id}`)).body;
    expect(stats).toMatchObject({
      received: 4,
      unmapped: 3,
      refused: 1,
      last_error: "malformed MIME: no boundary",
      last_error_at: "2026-03-02T09:00:04.000Z"
    });
    expect((await gw.call("GET", `/api/v1/integrations/int_nonexistent/log`)).status).toBe(404);
    expect(pointers(await gw.call("GET", `/api/v1/integrations/${id}/log?cursor=abc`))).toEqual(["/cursor"]);
  });

  it("rate-limits each origin as the HTTP API limits a key: counted, not kept, other origins unaffected", async () => {
    const {id} = await createIntegration({name: "chatty", kind: "email", unmapped: "keep"});
    const intake = gw.gateway.deviceIntake;
    const {burst} = gw.gateway.settings.rate_limit;
    const outcomes = [];
    for (let n = 0; n <= burst; n++)
      outcomes.push(await intake.take(record(id), mail("noise", "", "flood@plant.lan"), []));
    expect(outcomes.filter((outcome) => outcome.status === "unmapped")).toHaveLength(burst);
    expect(outcomes[burst]).toEqual({
      status: "refused",
      reason: expect.stringMatching(/^rate limited: flood@plant\.lan/),
      temporary: true
    });
    expect(await intake.take(record(id), mail("calm", "", "calm@plant.lan"), [])).toEqual({status: "unmapped"});
    // burst + 1 unmapped, of which the log keeps the newest KEPT_PER_INTEGRATION; the refusal is not among them.
    const log = await gw.call("GET", `/api/v1/integrations/${id}/log?limit=200`);
    expect(log.body.items).toHaveLength(Math.min(burst + 1, KEPT_PER_INTEGRATION));
    expect(log.body.items[0]).toMatchObject({origin: "calm@plant.lan"});
    expect(log.body.items.every((item: {outcome: string}) => item.outcome === "unmapped")).toBe(true);
    expect((await gw.call("GET", `/api/v1/integrations/${id}`)).body.stats).toMatchObject({
      received: burst + 2,
      refused: 1,
      unmapped: burst + 1
    });
  });

  it("refuses, counts and keeps an action the event handling refuses (a heartbeat key that is no heartbeat name)", async () => {
    const {id} = await createIntegration({name: "beats", kind: "email"});
    const outcome = await gw.gateway.deviceIntake.take(record(id), mail("alive"), [
      {action: "heartbeat", alert_id: "Not A Name!"}
    ]);
    expect(outcome).toEqual({status: "refused", reason: expect.stringContaining("heartbeat"), temporary: false});
    const log = await gw.call("GET", `/api/v1/integrations/${id}/log`);
    expect(log.body.items).toMatchObject([{outcome: "refused", summary: "alive"}]);
  });

  it("counts refusals that name no integration, and reports every device kind and outcome as a metric", async () => {
    gw.gateway.deviceIntake.refuse(null, {...mail("x"), transport: "snmp_trap"}, "unknown community");
    await gw.gateway.journal.write(() => undefined);
    const metrics = (await gw.call("GET", "/metrics")).body as string;
    expect(metrics).toContain('klaxon_integration_messages_total{kind="snmp_trap",outcome="refused"} 1');
    expect(metrics).toContain('klaxon_integration_messages_total{kind="mqtt",outcome="accepted"} 0');
    expect(metrics).toMatch(/klaxon_integration_messages_total\{kind="email",outcome="accepted"\} [1-9]/);
  });
});

describe("generic events in device messages", () => {
  const integration = {default_priority: "medium"} as IntegrationRecord;

  it("reads a generic event as the HTTP route does, ignoring fields devices add", () => {
    expect(
      genericEventActions(
        {alert_id: "pump-3", action: "fire", title: "Pump 3", severity: "crit", site: "A"},
        integration
      )
    ).toEqual([
      {
        action: "fire",
        alert_id: "pump-3",
        message: "Pump 3",
        priority: "critical",
        source: null,
        link: null,
        service: null,
        environment: null
      }
    ]);
    expect(genericEventActions({alert_id: "pump-3", action: "resolve"}, integration)).toEqual([
      {action: "resolve", alert_id: "pump-3"}
    ]);
  });

  it.each([
    ["a text", "pump 3 down"],
    ["a list", [{alert_id: "x", action: "fire"}]],
    ["no action", {alert_id: "x", title: "t"}],
    ["an unknown action", {alert_id: "x", action: "page", title: "t"}],
    ["a blank alert_id", {alert_id: " ", action: "fire", title: "t"}],
    ["a title of the wrong type", {alert_id: "x", action: "fire", title: 5}],
    ["a link that is no http URL", {alert_id: "x", action: "fire", title: "t", link: "ftp://x"}],
    ["a period out of range", {alert_id: "x", action: "heartbeat", period_seconds: 1}]
  ])("is null for %s", (_, value) => {
    expect(genericEventActions(value, integration)).toBeNull();
  });

  it("refuses an event the HTTP route refuses too: an unknown severity", () => {
    expect(() =>
      genericEventActions({alert_id: "x", action: "fire", title: "t", severity: "meh"}, integration)
    ).toThrow(/unknown severity "meh"/);
  });
});
