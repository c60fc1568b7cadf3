import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {RecordingDriver} from "../support/recording-driver.js";
import {ManualClock} from "../../src/lib/clock.js";

// 23:00 UTC: inside the quiet hours some recipients below keep.
const T0 = Date.UTC(2026, 10, 23, 23, 0, 0);

let gw: TestGateway;
let voice: RecordingDriver;
let email: RecordingDriver;

beforeEach(async () => {
  voice = new RecordingDriver("voice_call", 1);
  email = new RecordingDriver("email", 4);
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {
    clock: new ManualClock(T0),
    dataDir: tempDir(),
    drivers: () => [voice, email]
  });
});
afterEach(() => gw.stop());

/** Critical alerts may call Maria; high ones only email her. */
async function maria(fields: Record<string, unknown> = {}): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/recipients", {
    body: {
      name: "Maria",
      phone: "+4915112345678",
      email: "maria@factory.lan",
      channel_order: ["voice_call", "email"],
      escalation: {ack_timeout_seconds: 60, repeat: 0},
      routing_rules: [
        {priorities: ["critical"], channels: ["voice_call", "email"]},
        {priorities: ["high", "medium", "low"], channels: ["email"]}
      ],
      ...fields
    }
  });
  expect(answer.status).toBe(201);
  return answer.body.uuid;
}

async function send(recipient: string, priority: string): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipient, message: "Press 7 oil temperature high", priority, dedup_key: "press-7-oil"}
  });
  expect(answer.status).toBe(202);
  return answer.body.notification_uuid;
}

/** The notification once every delivery the runner started has been recorded. */
async function settled(id: string) {
  await gw.gateway.services.runner.idle();
  return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
}

const auditActions = async (id: string) =>
  (await gw.call("GET", `/api/v1/audit?subject_id=${id}`)).body.items.map((entry: {action: string}) => entry.action);
const raisedEvents = (id: string) =>
  (
    gw.gateway.journal.db
      .prepare("SELECT body FROM events WHERE notification_id = ? AND type = 'notification.priority_raised'")
      .all(id) as Array<{body: string}>
  ).map((row) => JSON.parse(row.body));
const calls = (id: string) =>
  voice.deliveries.filter((delivery) => delivery.alerts.some((alert) => alert.notification_id === id));

describe("a merge with a higher priority", () => {
  it("raises the open notification and pages at once on the new priority's channels", async () => {
    const recipient = await maria();
    const id = await send(recipient, "high");
    let n = await settled(id);
    expect(n).toMatchObject({priority: "high", channels_planned: ["email"]});
    expect(email.deliveries).toHaveLength(1);
    expect(voice.deliveries).toHaveLength(0);

    expect(await send(recipient, "critical")).toBe(id);
    n = await settled(id);
    expect(n).toMatchObject({priority: "critical", occurrences: 2, channels_planned: ["voice_call", "email"]});
    expect(n.escalation).toMatchObject({steps_total: 2});
    // The runner was told after the commit: no tick from the test, and no wait for the ack timeout.
    expect(calls(id).map((delivery) => delivery.contact)).toEqual(["+4915112345678"]);

    const audit = (await gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.priority_raised`)).body
      .items;
    expect(audit).toHaveLength(1);
    expect(audit[0].detail).toMatchObject({from: "high", to: "critical", dedup_key: "press-7-oil"});
    const [event] = raisedEvents(id);
    expect(event.data.notification).toMatchObject({
      id,
      priority: "critical",
      channels_planned: ["voice_call", "email"]
    });
    expect(event.data.previous_priority).toBe("high");
  });

  it("changes nothing but occurrences when the repeat is less urgent", async () => {
    const recipient = await maria();
    const id = await send(recipient, "critical");
    const before = await settled(id);
    expect(await send(recipient, "low")).toBe(id);
    const after = await settled(id);
    expect(after).toEqual({...before, occurrences: 2, updated_at: after.updated_at});
    expect(await auditActions(id)).toEqual(["notification.deduplicated", "notification.accepted"]);
    expect(raisedEvents(id)).toEqual([]);
    expect(calls(id)).toHaveLength(1);
  });

  it("pages at once a recipient in quiet hours when the raise reaches an override priority", async () => {
    const recipient = await maria({quiet_hours: {start: "22:00", end: "06:00", timezone: "UTC"}});
    const id = await send(recipient, "high");
    expect((await settled(id)).status).not.toBe("exhausted");
    expect(email.deliveries).toHaveLength(0);
    expect(voice.deliveries).toHaveLength(0);

    await send(recipient, "critical");
    expect(await settled(id)).toMatchObject({priority: "critical"});
    expect(calls(id)).toHaveLength(1);
  });

  it("raises an integration's alert repeated with a higher severity", async () => {
    const recipient = await maria();
    const integration = (
      await gw.call("POST", "/api/v1/integrations", {body: {name: "plc-bridge", kind: "generic", target: recipient}})
    ).body;
    const fire = (severity: string) =>
      gw.call("POST", `/api/v1/integrations/${integration.id}/events`, {
        body: {alert_id: "press-7", action: "fire", title: "Press 7 oil", severity}
      });
    const id = (await fire("error")).body.results[0].notification_uuid;
    expect(await settled(id)).toMatchObject({priority: "high", channels_planned: ["email"]});

    expect((await fire("critical")).body.results[0]).toMatchObject({outcome: "merged", notification_uuid: id});
    expect(await settled(id)).toMatchObject({
      priority: "critical",
      occurrences: 2,
      channels_planned: ["voice_call", "email"]
    });
    expect(calls(id)).toHaveLength(1);
    const audit = (await gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.priority_raised`)).body
      .items;
    expect(audit).toMatchObject([
      {actor: {type: "integration", id: integration.id}, detail: {from: "high", to: "critical"}}
    ]);
  });
});
