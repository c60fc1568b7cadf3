import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually, shareEmailRig} from "../channels/email-rig.js";
import {startAlarmServer, type AlarmServer} from "../support/opcua-alarm-server.js";

// An opcua integration through the API end to end: node-opcua's server raises an Alarms &
// Conditions alarm, the gateway pages through the loopback SMTP peer, and an acknowledgement
// travels both ways: a person's (API) reaches the condition's Acknowledge method with their
// name, and one done at the SCADA acknowledges the page.
const rig = shareEmailRig();
let server: AlarmServer;
let id: string;

beforeAll(async () => {
  server = await startAlarmServer();
  const target = await rig().recipient();
  const created = await rig().gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "tank-farm",
      kind: "opcua",
      target,
      opcua: {endpoint_url: server.endpointUrl, security_mode: "None", security_policy: "None", alarms: true},
      points: [],
      unreachable_after_seconds: 30
    }
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  id = created.body.id;
  await eventually(
    "connected",
    async () => (await rig().gw.call("GET", `/api/v1/integrations/${id}`)).body.link,
    (link) => link?.state === "connected"
  );
}, 60_000);
afterAll(async () => {
  await server.close();
});

const notificationSaying = async (text: string) => {
  const items = (await rig().gw.call("GET", "/api/v1/notifications?limit=50")).body.items as any[];
  return items.find((item) => item.message.includes(text));
};

describe("an opcua integration's alarms", () => {
  it("pages a raised alarm at its severity's priority, and a person's acknowledgement reaches the server", async () => {
    server.raise(850, "Tank 3 level high");
    const mail = await rig().peer.next();
    expect(mail.text).toContain("Tank 3 level high");
    const page = await notificationSaying("Tank 3 level high");
    expect(page.priority).toBe("critical");
    const ack = await rig().gw.call("POST", `/api/v1/notifications/${page.id}/ack`, {
      body: {by: "Maria Schulz", note: "valve closed"}
    });
    expect(ack.status).toBe(200);
    await eventually(
      "acknowledged on the server",
      () => server.acked(),
      (acked) => acked
    );
    expect(server.comment()).toContain("Maria Schulz");
    const audited = await eventually(
      "the acknowledgement on the server audited",
      async () =>
        (await rig().gw.call("GET", "/api/v1/audit?action=integration.alarm_acknowledged_on_device")).body.items,
      (items) => items.length === 1
    );
    expect(audited[0]).toMatchObject({
      subject: {type: "integration", id},
      detail: {by: "Maria Schulz", note: "valve closed"}
    });
    server.clear("Tank 3 level normal");
    await eventually(
      "resolved",
      () => notificationSaying("Tank 3 level high"),
      (notification) => notification.status === "resolved"
    );
  });

  it("acknowledges the page when the alarm is acknowledged at the SCADA", async () => {
    server.raise(450, "Tank 4 pump fault");
    await rig().peer.next();
    expect((await notificationSaying("Tank 4 pump fault")).priority).toBe("medium");
    server.acknowledgeHere("seen in the control room", "jwagner");
    const page = await eventually(
      "the page acknowledged",
      () => notificationSaying("Tank 4 pump fault"),
      (notification) => notification.status === "acknowledged"
    );
    // Who and where, since acknowledged_via can only say "api" (the contract has no device value).
    expect(page).toMatchObject({
      acknowledged_by: "jwagner on the SCADA/HMI via OPC UA (tank-farm)",
      acknowledged_via: "api",
      acknowledged_note: "seen in the control room"
    });
    const audit = (await rig().gw.call("GET", `/api/v1/audit?action=notification.acknowledged`)).body.items as any[];
    expect(audit.find((entry) => entry.subject.id === page.id)).toMatchObject({
      actor: {type: "integration", id},
      detail: {by: "jwagner on the SCADA/HMI via OPC UA (tank-farm)", via: "api"}
    });
  });
});
