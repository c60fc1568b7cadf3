import {afterAll, beforeAll, describe, expect, it, vi} from "vitest";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {startAlertmanager, type AlertmanagerPeer} from "./support/alertmanager.js";

let gw: TestGateway;
let alertmanager: AlertmanagerPeer;
let target: string;
let integration: {id: string; url: string};

beforeAll(async () => {
  gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
  target = await createRecipient(gw, {name: "Prometheus on-call"});
  integration = (
    await gw.call("POST", "/api/v1/integrations", {
      body: {name: "prometheus", kind: "alertmanager", target, default_priority: "low"}
    })
  ).body;
  alertmanager = await startAlertmanager(integration.url);
});
afterAll(async () => {
  await alertmanager?.stop();
  await gw?.stop();
});

interface Notification {
  id: string;
  status: string;
  message: string;
  priority: string;
  link: string | null;
  dedup_key: string | null;
  source: string | null;
}

async function notifications(): Promise<Notification[]> {
  return (await gw.call("GET", `/api/v1/notifications?recipient_uuid=${target}&limit=200`)).body.items;
}

/** Waits for Alertmanager's deliveries (group_wait and group_interval are one second). */
function eventually<T>(check: () => Promise<T>): Promise<T> {
  return vi.waitFor(check, {timeout: 20_000, interval: 200});
}

const alert = (instance: string, severity: string, endsAt: Date) => ({
  labels: {alertname: "DiskFull", instance, severity, job: "node"},
  annotations: {summary: `${instance} disk 97% full`},
  startsAt: new Date(Date.now() - 60_000).toISOString(),
  endsAt: endsAt.toISOString(),
  generatorURL: `http://prometheus.factory.lan/graph?g0.expr=disk_used%7Binstance%3D%22${instance}%22%7D`
});

describe("Prometheus Alertmanager (the real one) into Klaxon", () => {
  it("pages for grouped firing alerts and resolves them when they are resolved in Alertmanager", async () => {
    const inAnHour = new Date(Date.now() + 3_600_000);
    await alertmanager.push([alert("db1", "critical", inAnHour), alert("db2", "warning", inAnHour)]);

    const fired = await eventually(async () => {
      const items = await notifications();
      expect(items, alertmanager.output()).toHaveLength(2);
      return items;
    });
    const held = await alertmanager.alerts();
    const fingerprintOf = (instance: string) => held.find((each) => each.labels.instance === instance)?.fingerprint;
    const byInstance = (instance: string) =>
      fired.find((item) => item.dedup_key === `${integration.id}:${fingerprintOf(instance)}`);
    expect(byInstance("db1")).toMatchObject({
      message: "DiskFull: db1 disk 97% full",
      priority: "critical",
      source: "prometheus"
    });
    expect(["queued", "notifying"]).toContain(byInstance("db1")?.status);
    expect(byInstance("db1")?.link).toContain("instance%3D%22db1%22");
    expect(byInstance("db2")).toMatchObject({message: "DiskFull: db2 disk 97% full", priority: "medium"});

    const audit = (await gw.call("GET", `/api/v1/audit?action=notification.accepted`)).body.items;
    for (const item of fired) {
      expect(audit.find((entry: {subject: {id: string}}) => entry.subject.id === item.id)).toMatchObject({
        actor: {type: "integration", id: integration.id},
        source: "prometheus"
      });
    }

    // Alertmanager resolves an alert whose endsAt has passed, and tells its receivers so.
    const past = new Date(Date.now() - 1_000);
    await alertmanager.push([alert("db1", "critical", past), alert("db2", "warning", past)]);
    await eventually(async () => {
      const items = await notifications();
      expect(
        items.map((item) => item.status),
        alertmanager.output()
      ).toEqual(["resolved", "resolved"]);
    });
    const resolvedBy = (await gw.call("GET", `/api/v1/audit?action=notification.resolved`)).body.items;
    for (const item of fired) {
      expect(resolvedBy.find((entry: {subject: {id: string}}) => entry.subject.id === item.id)).toMatchObject({
        actor: {type: "integration", id: integration.id}
      });
    }
  });
});
