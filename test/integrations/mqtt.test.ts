import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {emailRig, eventually, stopEmailRigs, type EmailRig} from "../channels/email-rig.js";
import {freePort, startMosquitto, type Mosquitto} from "../support/mosquitto.js";
import {MQTT_PAYLOAD_MAX_BYTES} from "../../src/services/integrations/mqtt/mqtt-intake.js";
import {DEFAULT_SETTINGS} from "../../src/settings/defaults.js";

// The MQTT integration end to end: Debian's mosquitto on loopback, mosquitto_pub publishing at
// QoS 1, the gateway with its production drivers paging through a loopback SMTP peer. The clock
// stands still, so each topic's rate limit allows exactly its burst and no more.
let broker: Mosquitto;
beforeAll(async () => {
  broker = await startMosquitto();
});
afterAll(async () => {
  await broker.stop();
});
stopEmailRigs();

/** The HTTP API's burst (settings.rate_limit.burst), which each topic gets too. */
const BURST = DEFAULT_SETTINGS.rate_limit.burst;

async function rigWithIntegration(fields: Record<string, unknown>, brokerUrl = broker.url) {
  const rig = await emailRig({gateway: {clock: new ManualClock(Date.parse("2026-11-25T22:00:00.000Z"))}});
  const target = await rig.recipient();
  const created = await rig.gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "plant broker",
      kind: "mqtt",
      target,
      default_priority: "critical",
      broker_url: brokerUrl,
      unmapped: "keep",
      ...fields
    }
  });
  expect(created.status).toBe(201);
  return {rig, integration: created.body as {id: string; password_set: boolean; client_id: string}};
}

const integrationOf = async (rig: EmailRig, id: string) =>
  (await rig.gw.call("GET", `/api/v1/integrations/${id}`)).body;

const connected = (rig: EmailRig, id: string) =>
  eventually(
    "broker connection",
    () => integrationOf(rig, id),
    (integration) => integration.connection?.connected === true
  );

const statsReach = (rig: EmailRig, id: string, check: (stats: Record<string, number>) => boolean) =>
  eventually("integration stats", async () => (await integrationOf(rig, id)).stats, check);

const SCADA = {key: "/tag", action: "/state", title: "/text", fire_values: ["ALARM"], resolve_values: ["OK"]};

describe("MQTT integration", () => {
  it("fires, merges a repeat, resolves, and pages once through email", async () => {
    const {rig, integration} = await rigWithIntegration({topics: ["scada/+/alarms"], json: SCADA});
    await connected(rig, integration.id);
    const alarm = JSON.stringify({tag: "TK-101", state: "ALARM", text: "Tank 101 overfill"});
    broker.publish("scada/tanks/alarms", alarm);
    const mail = await rig.peer.next();
    expect(mail.text).toContain("Tank 101 overfill");

    broker.publish("scada/tanks/alarms", alarm);
    broker.publish("scada/tanks/alarms", JSON.stringify({tag: "TK-101", state: "OK"}));
    await statsReach(rig, integration.id, (stats) => stats.accepted === 3);
    const notifications = (await rig.gw.call("GET", "/api/v1/notifications?limit=10")).body.items;
    expect(notifications).toHaveLength(1);
    const notification = await rig.notification(notifications[0].id);
    expect(notification).toMatchObject({status: "resolved"});
    expect(rig.peer.messages).toHaveLength(1);
  });

  it("pings a heartbeat from a heartbeat topic", async () => {
    const {rig, integration} = await rigWithIntegration({
      topics: ["edge/#"],
      heartbeat_topics: [{topic: "edge/plc1/alive", name: "plc1", period_seconds: 60}]
    });
    await connected(rig, integration.id);
    broker.publish("edge/plc1/alive", "4711");
    await statsReach(rig, integration.id, (stats) => stats.accepted === 1);
    const heartbeat = (await rig.gw.call("GET", "/api/v1/heartbeats/plc1")).body;
    expect(heartbeat).toMatchObject({name: "plc1", period_seconds: 60});
  });

  it("maps a plain-text payload by the text rules, and keeps a malformed JSON as unmapped", async () => {
    const {rig, integration} = await rigWithIntegration({
      topics: ["line/#"],
      json: SCADA,
      rules: [{field: "payload", match: "regex", pattern: "^STOP (\\w+)", action: "fire", alert_key: "{1}"}]
    });
    await connected(rig, integration.id);
    broker.publish("line/4", "STOP conveyor");
    broker.publish("line/4", '{"tag": "TK-9", "state": ');
    await statsReach(rig, integration.id, (stats) => stats.accepted === 1 && stats.unmapped === 1);
    const log = (await rig.gw.call("GET", `/api/v1/integrations/${integration.id}/log`)).body.items;
    expect(log).toEqual([
      expect.objectContaining({outcome: "unmapped", origin: "line/4", body: '{"tag": "TK-9", "state": '})
    ]);
    expect(log[0].reason).toMatch(/^not JSON/);
  });

  it("refuses and counts an oversized payload, and rate-limits a flood on one topic", async () => {
    const {rig, integration} = await rigWithIntegration({topics: ["noisy/#"]});
    await connected(rig, integration.id);
    broker.publish("noisy/big", Buffer.alloc(MQTT_PAYLOAD_MAX_BYTES + 1, "x"));
    await statsReach(rig, integration.id, (stats) => stats.refused === 1);
    expect((await integrationOf(rig, integration.id)).stats.last_error).toMatch(/over the limit/);

    // Plain text no rule maps: each message the limiter lets through is kept as unmapped, cheaply.
    const flood = Array.from({length: BURST + 30}, (_, index) => `sensor chatter ${index}`);
    broker.publishLines("noisy/flood", flood);
    // The clock stands still: the topic's bucket holds its burst and never refills.
    const stats = await statsReach(rig, integration.id, (counted) => counted.received === 1 + BURST + 30);
    expect(stats).toMatchObject({accepted: 0, unmapped: BURST, refused: 1 + 30});
    expect(stats.last_error).toMatch(/^rate limited: noisy\/flood/);
  });

  it("restores a retained fire at subscribe, and pages for it only once across restarts", async () => {
    const alarm = {alert_id: "tk-201", action: "fire", title: "Tank 201 overfill (retained)"};
    broker.publishRetained("retained/tanks/tk-201", JSON.stringify(alarm));
    const {rig, integration} = await rigWithIntegration({topics: ["retained/#"]});
    expect((await rig.peer.next()).text).toContain(alarm.title);
    const [paged] = (await rig.gw.call("GET", "/api/v1/notifications?limit=1")).body.items;
    expect((await rig.gw.call("POST", `/api/v1/notifications/${paged.id}/resolve`)).status).toBe(200);

    // Every start subscribes again, and the broker hands out its retained copy again.
    // (A reconnect within a run subscribes again too, so the copies are counted as at least one per start.)
    await rig.gw.restart();
    await statsReach(rig, integration.id, (stats) => stats.received >= 2);
    await rig.gw.restart();
    await statsReach(rig, integration.id, (stats) => stats.received >= 3);
    expect(rig.peer.messages.filter((mail) => mail.text?.includes(alarm.title))).toHaveLength(1);
    expect((await rig.gw.call("GET", "/api/v1/notifications?limit=10")).body.items).toHaveLength(1);
    broker.publishRetained("retained/tanks/tk-201", "");
  });

  it("resolves an open alert from a retained resolve handed out at subscribe", async () => {
    const {rig, integration} = await rigWithIntegration({topics: ["restore/alarms/#"]});
    await connected(rig, integration.id);
    broker.publish(
      "restore/alarms/tk-202",
      JSON.stringify({alert_id: "tk-202", action: "fire", title: "Tank 202 low"})
    );
    expect((await rig.peer.next()).text).toContain("Tank 202 low");
    // Published where the client does not listen yet: it reaches it only as the retained state.
    broker.publishRetained("restore/clear/tk-202", JSON.stringify({alert_id: "tk-202", action: "resolve"}));
    const path = `/api/v1/integrations/${integration.id}`;
    expect((await rig.gw.call("PATCH", path, {body: {topics: ["restore/alarms/#", "restore/clear/#"]}})).status).toBe(
      200
    );
    await statsReach(rig, integration.id, (stats) => stats.accepted === 2);
    const [alert] = (await rig.gw.call("GET", "/api/v1/notifications?limit=1")).body.items;
    expect(alert).toMatchObject({status: "resolved"});
    broker.publishRetained("restore/clear/tk-202", "");
  });

  it("connects once a broker that was down at the start comes up, and takes its messages", async () => {
    const port = await freePort();
    const {rig, integration} = await rigWithIntegration({topics: ["late/#"]}, `mqtt://127.0.0.1:${port}`);
    await eventually(
      "the refused first attempt",
      async () => (await integrationOf(rig, integration.id)).connection,
      (connection) => connection?.connected === false && typeof connection.last_error === "string"
    );
    const late = await startMosquitto(port);
    try {
      await connected(rig, integration.id);
      late.publish("late/pump", JSON.stringify({alert_id: "pump-3", action: "fire", title: "Pump 3 stopped"}));
      expect((await rig.peer.next()).text).toContain("Pump 3 stopped");
    } finally {
      await late.stop();
    }
  });

  it("never shows the password, and shows the broker's state on /readyz without making the gateway unready", async () => {
    const {rig, integration} = await rigWithIntegration(
      {
        topics: ["down/#"],
        username: "klaxon",
        password: "Mq77-secret-pass"
      },
      "mqtt://127.0.0.1:1"
    );
    expect(integration).toMatchObject({password_set: true});
    expect(JSON.stringify(integration)).not.toContain("Mq77-secret-pass");
    const ready = await eventually(
      "broker state on /readyz",
      async () => await rig.gw.call("GET", "/readyz"),
      // Nothing listens on port 1: the first attempt is refused.
      (answer) => typeof answer.body.mqtt_brokers?.[0]?.last_error === "string"
    );
    expect(ready.status).toBe(200);
    expect(ready.body.mqtt_brokers).toEqual([
      expect.objectContaining({integration_id: integration.id, broker_url: "mqtt://127.0.0.1:1", connected: false})
    ]);
    expect(rig.gw.logLines.join("\n")).not.toContain("Mq77-secret-pass");
  });
});
