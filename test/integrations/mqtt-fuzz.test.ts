import fc from "fast-check";
import mqtt from "mqtt";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {emailRig, eventually, stopEmailRigs} from "../channels/email-rig.js";
import {addConnectedMqttIntegration, startMosquitto, type Mosquitto} from "../support/mosquitto.js";
import {MQTT_PAYLOAD_MAX_BYTES} from "../../src/services/integrations/mqtt/mqtt-intake.js";

// Hostile MQTT payloads through mosquitto against a running gateway whose integration has every
// mapping path on (a generic event, JSON pointers, text rules with regexes, heartbeat topics):
// random bytes, bad UTF-8, huge and deeply nested JSON, near-miss generic events, oversized
// payloads, on random topics. Afterwards the gateway is alive, every message was counted (none
// lost, none stuck unacknowledged), and a critical alarm still pages within 2 s.
let broker: Mosquitto;
beforeAll(async () => {
  broker = await startMosquitto();
});
afterAll(async () => {
  await broker.stop();
});
stopEmailRigs();

const SEED = 290629;

const deep = (depth: number, open: string, close: string, inner = "1") =>
  open.repeat(depth) + inner + close.repeat(depth);
/** Each kind of hostile payload and how many of it. */
const hostilePayloads: [number, fc.Arbitrary<Buffer>][] = [
  [400, fc.uint8Array({maxLength: 2048}).map((bytes) => Buffer.from(bytes))],
  // Invalid UTF-8: lone continuation bytes, overlong forms, surrogates, truncated sequences.
  [
    400,
    fc
      .array(fc.constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90], [0xff], [0x7b, 0x22]), {
        maxLength: 200
      })
      .map((parts) => Buffer.from(parts.flat()))
  ],
  [300, fc.integer({min: 1_000, max: 20_000}).map((depth) => Buffer.from(deep(depth, "[", "]")))],
  [300, fc.integer({min: 1_000, max: 6_000}).map((depth) => Buffer.from(deep(depth, '{"state":', "}", '"ALARM"')))],
  [
    200,
    fc
      .string({minLength: 1_000, maxLength: 30_000})
      .map((text) => Buffer.from(JSON.stringify({alert_id: text, action: "fire", title: text})))
  ],
  [
    600,
    fc
      .record({
        alert_id: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string())),
        action: fc.oneof(fc.constantFrom("fire", "resolve", "heartbeat", "FIRE", ""), fc.string()),
        title: fc.oneof(fc.string({maxLength: 5000}), fc.object()),
        severity: fc.oneof(fc.constantFrom("critical", "P1", "bogus"), fc.integer()),
        period_seconds: fc.oneof(fc.integer(), fc.double(), fc.string())
      })
      .map((event) => Buffer.from(JSON.stringify(event)))
  ],
  [20, fc.constant(Buffer.alloc(MQTT_PAYLOAD_MAX_BYTES + 1, "a"))],
  // Regex bait for the rule below: long runs with no match at the end. Each costs the rule's time
  // limit (250 ms) in the mapping worker, so a few.
  [8, fc.integer({min: 1_000, max: 60_000}).map((length) => Buffer.from("a".repeat(length) + "!"))]
];
const topics = fc.oneof(
  fc.constantFrom("fuzz/alarms/x", "fuzz/alive/plc1", "fuzz/telemetry"),
  fc.stringMatching(/^fuzz(\/[a-z0-9+#$ ]{0,12}){1,8}$/).map((topic) => topic.replace(/[+#]/g, "_"))
);

describe("MQTT payload fuzz", () => {
  it("takes thousands of hostile payloads: the gateway stays up, counts them all, and still pages within 2 s", async () => {
    const rig = await emailRig();
    const target = await rig.recipient();
    const path = await addConnectedMqttIntegration(rig.gw, {
      name: "fuzzed broker",
      // Thousands of payloads on random topics would each page as its own unmapped alert.
      unmapped: "keep",
      target,
      default_priority: "critical",
      broker_url: broker.url,
      topics: ["fuzz/#"],
      json: {key: "/tag", action: "/state", title: "/text", fire_values: ["ALARM"], resolve_values: ["OK"]},
      heartbeat_topics: [{topic: "fuzz/alive/+", name: "plc-fuzz", period_seconds: 3600}],
      rules: [{field: "payload", match: "regex", pattern: "^(a+)+$", action: "fire", alert_key: "rule"}]
    });
    const messages = hostilePayloads.flatMap(([count, payloads], kind) =>
      fc.sample(fc.tuple(topics, payloads), {numRuns: count, seed: SEED + kind})
    );
    const client = await mqtt.connectAsync(broker.url, {protocolVersion: 5, clean: true, reconnectPeriod: 0});
    try {
      await Promise.all(messages.map(([topic, payload]) => client.publishAsync(topic, payload, {qos: 1})));
      const stats = await eventually(
        "every fuzzed message counted",
        async () => (await rig.gw.call("GET", path)).body.stats,
        (counted) => counted.received >= messages.length,
        60_000
      );
      expect(stats.received).toBe(messages.length);
      expect((await rig.gw.call("GET", "/healthz")).status).toBe(200);
      // The mapping worker is on /metrics and /readyz; none of these payloads ended it.
      expect(rig.gw.gateway.parserWorkers.reports()).toContainEqual(
        expect.objectContaining({name: "mqtt-mapper", running: true, crashes: {throw: 0, hang: 0, memory: 0, exit: 0}})
      );

      // Afterwards an alarm pages at once. The fuzz's own fires are resolved first, so the probe
      // does not join their storm and wait for its next page.
      for (const status of ["queued", "notifying"])
        for (const open of (await rig.gw.call("GET", `/api/v1/notifications?status=${status}&limit=200`)).body.items)
          await rig.gw.call("POST", `/api/v1/notifications/${open.id}/resolve`);
      const sentAt = Date.now();
      await client.publishAsync(
        "fuzz/alarms/probe",
        JSON.stringify({alert_id: "fuzz-probe", action: "fire", title: "Probe after the fuzz"}),
        {qos: 1}
      );
      await eventually(
        "the probe's page",
        () => rig.peer.messages.some((mail) => mail.text?.includes("Probe after the fuzz")),
        (paged) => paged,
        10_000
      );
      expect(Date.now() - sentAt).toBeLessThan(2_000);
    } finally {
      await client.endAsync();
    }
  }, 120_000);
});
