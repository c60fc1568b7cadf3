import {describe, expect, it} from "vitest";
import fc from "fast-check";
import {defaultClientId, mqttActions} from "../../../src/services/integrations/mqtt/mqtt-mapping.js";
import {pointerValue, topicFilterProblem, topicMatches} from "../../../src/domain/mqtt.js";
import {TimedRegex} from "../../../src/lib/timed-regex.js";
import type {IntegrationRecord} from "../../../src/store/config/config-store.js";
import type {MqttIntegrationFields} from "../../../src/domain/mqtt.js";

const regex = new TimedRegex();
const matcher = (pattern: string, text: string) => regex.match(pattern, text);

function integration(fields: Partial<IntegrationRecord & MqttIntegrationFields> = {}) {
  return {
    id: "int_01JD00000000000000ABCDEFGH",
    name: "plant broker",
    kind: "mqtt",
    target: "rcp",
    default_priority: "high",
    secret: "s",
    url_token: "t",
    created_at: "2026-11-25T00:00:00.000Z",
    updated_at: "2026-11-25T00:00:00.000Z",
    ...fields
  } as IntegrationRecord & Partial<MqttIntegrationFields>;
}

const scada = {
  key: "/tag",
  action: "/state",
  title: "/text",
  priority: "/severity",
  fire_values: ["ALARM"],
  resolve_values: ["OK", "normal"],
  heartbeat_values: ["ALIVE"]
};

describe("mqttActions", () => {
  it("takes a generic event as it is, without any mapping", () => {
    const mapped = mqttActions(
      integration(),
      "plant/line1",
      JSON.stringify({alert_id: "boiler-1", action: "fire", title: "Boiler pressure", severity: "critical"}),
      matcher
    );
    expect(mapped).toEqual({
      actions: [expect.objectContaining({action: "fire", alert_id: "boiler-1", priority: "critical"})],
      note: null
    });
  });

  it("reads key, action, title and priority through the JSON pointers, the action words ignoring case", () => {
    const payload = JSON.stringify({tag: "TK-101.level", state: "alarm", text: "Tank 101 overfill", severity: "P1"});
    expect(mqttActions(integration({json: scada}), "scada/tanks", payload, matcher).actions).toEqual([
      {
        action: "fire",
        alert_id: "TK-101.level",
        message: "Tank 101 overfill",
        priority: "critical",
        source: null,
        link: null,
        service: null,
        environment: null
      }
    ]);
    const resolved = mqttActions(
      integration({json: scada}),
      "scada/tanks",
      '{"tag":"TK-101.level","state":"NORMAL"}',
      matcher
    );
    expect(resolved.actions).toEqual([{action: "resolve", alert_id: "TK-101.level"}]);
  });

  it("keys an alert by its topic when the mapping names no key, titles it by the topic, and gives an unknown severity word the default priority", () => {
    const mapping = {action: "/s", fire_values: ["1"], resolve_values: ["0"], priority: "/sev"};
    const [action] = mqttActions(
      integration({json: mapping}),
      "plc/7/door",
      '{"s":1,"sev":"Klasse B"}',
      matcher
    ).actions;
    expect(action).toMatchObject({action: "fire", alert_id: "plc/7/door", message: "plc/7/door", priority: "high"});
  });

  it("pings a heartbeat from an action word, and from any message on a heartbeat topic", () => {
    const alive = mqttActions(integration({json: scada}), "scada/plc", '{"tag":"plc-4","state":"Alive"}', matcher);
    expect(alive.actions).toEqual([{action: "heartbeat", alert_id: "plc-4", period_seconds: undefined}]);
    const topic = mqttActions(
      integration({heartbeat_topics: [{topic: "plc/+/alive", name: "edge-gateway", period_seconds: 60}]}),
      "plc/3/alive",
      "12345",
      matcher
    );
    expect(topic.actions).toEqual([{action: "heartbeat", alert_id: "edge-gateway", period_seconds: 60}]);
  });

  it("refuses a heartbeat whose key is not a heartbeat name, as the HTTP route does", () => {
    expect(() =>
      mqttActions(integration({json: scada}), "scada/plc", '{"tag":"PLC 4!","state":"alive"}', matcher)
    ).toThrow(/heartbeat/);
  });

  it("maps a plain-text payload with the text rules on topic and payload", () => {
    const rules = [
      {
        field: "payload" as const,
        match: "regex" as const,
        pattern: "^ALARM (\\w+)",
        action: "fire" as const,
        alert_key: "{1}"
      },
      {
        field: "payload" as const,
        match: "contains" as const,
        pattern: "cleared",
        action: "resolve" as const,
        alert_key: "pump"
      }
    ];
    const fired = mqttActions(integration({rules}), "plant/pumps", "ALARM pump overheated", matcher);
    expect(fired.actions).toEqual([
      expect.objectContaining({action: "fire", alert_id: "pump", message: "plant/pumps: ALARM pump overheated"})
    ]);
    expect(mqttActions(integration({rules}), "plant/pumps", "pump alarm cleared", matcher).actions).toEqual([
      {action: "resolve", alert_id: "pump"}
    ]);
  });

  it("keeps a malformed JSON payload as unmapped, saying why", () => {
    const mapped = mqttActions(integration({json: scada}), "scada/tanks", '{"tag": "TK-1", "state": ', matcher);
    expect(mapped.actions).toEqual([]);
    expect(mapped.note).toMatch(/^not JSON: .+; no mapping matched$/);
  });

  it("keeps a JSON payload whose action word is not listed, and one without a key", () => {
    expect(mqttActions(integration({json: scada}), "t", '{"tag":"a","state":"MAINT"}', matcher).note).toBe(
      'action value "MAINT" at /state is not a listed value; no mapping matched'
    );
    expect(mqttActions(integration({json: scada}), "t", '{"state":"ALARM"}', matcher).note).toBe(
      "no key at /tag; no mapping matched"
    );
  });
});

describe("topic filters", () => {
  it("match as MQTT defines wildcards", () => {
    expect(topicMatches("plant/#", "plant")).toBe(true);
    expect(topicMatches("plant/#", "plant/a/b")).toBe(true);
    expect(topicMatches("plant/+/temp", "plant/line1/temp")).toBe(true);
    expect(topicMatches("plant/+/temp", "plant/line1/x/temp")).toBe(false);
    expect(topicMatches("plant/+", "plant")).toBe(false);
    expect(topicMatches("#", "$SYS/broker/uptime")).toBe(false);
    expect(topicMatches("a/b", "a/b/c")).toBe(false);
  });

  it("a filter without wildcards matches exactly its own topic", () => {
    const level = fc.stringMatching(/^[a-z0-9]{0,5}$/);
    fc.assert(
      fc.property(
        fc.array(level, {minLength: 1, maxLength: 4}),
        fc.array(level, {minLength: 1, maxLength: 4}),
        (a, b) => {
          expect(topicMatches(a.join("/"), b.join("/"))).toBe(a.join("/") === b.join("/"));
          expect(topicMatches("#", b.join("/"))).toBe(true);
        }
      )
    );
  });

  it("are refused when a wildcard is not a whole level or # is not last", () => {
    expect(topicFilterProblem("plant/#")).toBeNull();
    expect(topicFilterProblem("plant/li+ne")).toMatch(/whole level/);
    expect(topicFilterProblem("plant/#/x")).toMatch(/last level/);
    expect(topicFilterProblem("")).toMatch(/empty/);
  });
});

describe("JSON pointers", () => {
  it("follow RFC 6901, escapes and array indexes included", () => {
    const document = {"a/b": {"m~n": [10, {x: "deep"}]}};
    expect(pointerValue(document, "/a~1b/m~0n/1/x")).toBe("deep");
    expect(pointerValue(document, "/a~1b/m~0n/0")).toBe(10);
    expect(pointerValue(document, "/a~1b/m~0n/01")).toBeUndefined();
    expect(pointerValue(document, "/missing")).toBeUndefined();
    expect(pointerValue(document, "/toString")).toBeUndefined();
    expect(pointerValue(document, "")).toBe(document);
  });
});

describe("defaultClientId", () => {
  it("is the same for an integration on every start and fits MQTT 3.1.1's 23 characters", () => {
    expect(defaultClientId("int_01JD00000000000000ABCDEFGH")).toBe("klaxon-00000000ABCDEFGH");
    expect(defaultClientId("int_01JD00000000000000ABCDEFGH").length).toBeLessThanOrEqual(23);
  });
});
