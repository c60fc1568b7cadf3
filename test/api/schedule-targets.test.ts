import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";

// A schedule's uuid is a target wherever a recipient's or group's is: the send, heartbeats and
// integrations; what it pages at each step is covered by test/e2e/schedule-paging.test.ts.

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.stop());

describe("a schedule as a target", () => {
  it("is accepted by the send, which snapshots whoever is on call, and cannot be deleted while the alert is open", async () => {
    const {schedule} = await createPlant(gw, "2020-01-01");
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: schedule.uuid, message: "Line 3 stopped", priority: "high"}
    });
    expect(sent.status).toBe(202);
    const id = sent.body.notification_uuid;
    const refused = await gw.call("DELETE", `/api/v1/schedules/${schedule.uuid}`);
    expect(refused.status).toBe(409);
    expect(refused.body.blocking_notifications).toEqual([id]);
    expect((await gw.call("POST", `/api/v1/notifications/${id}/resolve`, {body: {}})).status).toBe(200);
    expect((await gw.call("DELETE", `/api/v1/schedules/${schedule.uuid}`)).status).toBe(204);
  });

  it("is a heartbeat's and an integration's target, and cannot be deleted while they page it", async () => {
    const {schedule} = await createPlant(gw);
    const heartbeat = await gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "line-3-plc", period_seconds: 60, target: schedule.uuid}
    });
    expect(heartbeat.status).toBe(201);
    const integration = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "line-3-grafana", kind: "generic", target: schedule.uuid}
    });
    expect(integration.status).toBe(201);
    const refused = await gw.call("DELETE", `/api/v1/schedules/${schedule.uuid}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("heartbeat line-3-plc");
    expect(refused.body.detail).toContain(`integration line-3-grafana (${integration.body.id})`);
  });

  it("is refused, with the field named, when the uuid names nothing", async () => {
    const unknown = "00000000-0000-4000-8000-00000000abcd";
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: unknown, message: "x", priority: "high"}
    });
    expect(sent.status).toBe(422);
    expect(sent.body.errors).toEqual([
      {pointer: "/recipient_uuid", detail: `no recipient, group, schedule or escalation policy has the uuid ${unknown}`}
    ]);
  });
});
