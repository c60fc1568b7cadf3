import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {journalCounts, type TestGateway} from "../support/gateway.js";
import {eventsPath, integrationRig, urlPath, type CreatedIntegration} from "../support/integration-rig.js";
import {pointers} from "../support/problem-pointers.js";

// What generic and Alertmanager events do: fire, merge, resolve, ping heartbeats, refuse bad bodies.
const {clock, start, sendEvent} = integrationRig();
let gw: TestGateway;
let target: string;
let generic: CreatedIntegration;
let sender: string;

beforeAll(async () => {
  ({gw, target, generic, sender} = await start());
});
afterAll(() => gw.stop());

describe("generic events", () => {
  it("fires, merges repeats while unresolved, resolves, and fires anew after that", async () => {
    const fire = {
      alert_id: "db1-disk",
      action: "fire",
      title: "Disk full",
      message: "db1 /var at 97%",
      severity: "error",
      source: "db1",
      link: "https://grafana.factory.lan/d/db1"
    };
    const first = await sendEvent(fire);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      integration_id: generic.id,
      results: [
        {
          alert_id: "db1-disk",
          action: "fire",
          outcome: "created",
          notification_uuid: expect.stringMatching(/^notif_/),
          heartbeat_status: null
        }
      ]
    });
    const id = first.body.results[0].notification_uuid;
    const notification = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(notification).toMatchObject({
      recipient_uuid: target,
      message: "Disk full: db1 /var at 97%",
      priority: "high",
      source: "db1",
      link: fire.link,
      dedup_key: `${generic.id}:db1-disk`,
      occurrences: 1
    });

    const repeat = await sendEvent(fire);
    expect(repeat.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: id});
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.occurrences).toBe(2);

    const resolved = await sendEvent({alert_id: "db1-disk", action: "resolve"});
    expect(resolved.body.results[0]).toMatchObject({action: "resolve", outcome: "resolved", notification_uuid: id});
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
    expect((await sendEvent({alert_id: "db1-disk", action: "resolve"})).body.results[0]).toMatchObject({
      outcome: "no_open_alert",
      notification_uuid: null
    });

    const again = await sendEvent(fire);
    expect(again.body.results[0].outcome).toBe("created");
    expect(again.body.results[0].notification_uuid).not.toBe(id);

    const audit = await gw.call("GET", `/api/v1/audit?subject_id=${id}`);
    expect(audit.body.items.map((entry: {action: string}) => entry.action)).toEqual([
      "notification.resolved",
      "notification.deduplicated",
      "notification.accepted"
    ]);
    for (const entry of audit.body.items) expect(entry.actor).toMatchObject({type: "integration", id: generic.id});
    expect(audit.body.items[2]).toMatchObject({source: "db1", detail: {target, priority: "high"}});
  });

  it("keeps merging into an acknowledged alert until it is resolved, so repeats never page again", async () => {
    const fire = {alert_id: "line-3-stop", action: "fire", title: "Line 3 stopped"};
    const id = (await sendEvent(fire)).body.results[0].notification_uuid;
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body).toMatchObject({
      source: "go-services",
      priority: "high"
    });
    expect((await gw.call("POST", `/api/v1/notifications/${id}/ack`)).status).toBe(200);
    const repeat = await sendEvent(fire);
    expect(repeat.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: id});
    const read = (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    expect(read).toMatchObject({status: "acknowledged", occurrences: 2});
    expect((await sendEvent({alert_id: "line-3-stop", action: "resolve"})).body.results[0].outcome).toBe("resolved");
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
  });

  it("scopes alert ids to their integration", async () => {
    const other = (await gw.call("POST", "/api/v1/integrations", {body: {name: "other-team", kind: "generic", target}}))
      .body;
    const mine = (await sendEvent({alert_id: "shared-id", action: "fire", message: "mine"})).body.results[0];
    const theirs = (await sendEvent({alert_id: "shared-id", action: "fire", message: "theirs"}, {id: other.id})).body
      .results[0];
    expect(mine.outcome).toBe("created");
    expect(theirs.outcome).toBe("created");
    expect(theirs.notification_uuid).not.toBe(mine.notification_uuid);
  });

  it("maps severities to priorities and falls back to the integration's default", async () => {
    const cases: Array<[string | undefined, string]> = [
      ["critical", "critical"],
      ["PAGE", "critical"],
      ["warning", "medium"],
      ["notice", "low"],
      ["info", "info"],
      [undefined, "high"]
    ];
    for (const [severity, priority] of cases) {
      const body = {
        alert_id: `sev-${severity ?? "none"}`,
        action: "fire",
        message: "severity check",
        ...(severity ? {severity} : {})
      };
      const id = (await sendEvent(body)).body.results[0].notification_uuid;
      expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.priority, String(severity)).toBe(priority);
    }
  });

  it("pings the heartbeat named alert_id, creating it on first use", async () => {
    const first = await sendEvent({alert_id: "edge-gateway-4", action: "heartbeat", period_seconds: 30});
    expect(first.body.results[0]).toEqual({
      alert_id: "edge-gateway-4",
      action: "heartbeat",
      outcome: "heartbeat_created",
      notification_uuid: null,
      heartbeat_status: "up"
    });
    const heartbeat = (await gw.call("GET", "/api/v1/heartbeats/edge-gateway-4")).body;
    expect(heartbeat).toMatchObject({
      period_seconds: 30,
      target,
      priority: "high",
      status: "up",
      created_by_integration: generic.id,
      last_ping_at: new Date(clock.now()).toISOString()
    });
    clock.advance(10_000);
    const second = await sendEvent({alert_id: "edge-gateway-4", action: "heartbeat"});
    expect(second.body.results[0]).toMatchObject({outcome: "pinged", heartbeat_status: "up"});
    expect((await gw.call("GET", "/api/v1/heartbeats/edge-gateway-4")).body.last_ping_at).toBe(
      new Date(clock.now()).toISOString()
    );
  });

  it.each([
    [{action: "fire", message: "x"}, "/alert_id"],
    [{alert_id: "a", message: "x"}, "/action"],
    [{alert_id: "a", action: "explode"}, "/action"],
    [{alert_id: "a", action: "fire"}, "/title"],
    [{alert_id: "a", action: "fire", title: "x", severity: "apocalyptic"}, "/severity"],
    [{alert_id: "a", action: "fire", title: "x", link: "ftp://x"}, "/link"],
    [{alert_id: "a", action: "fire", title: "x", titel: "typo"}, "/titel"],
    [{alert_id: "a", action: "fire", title: 5}, "/title"],
    [{alert_id: "new-beat", action: "heartbeat"}, "/period_seconds"],
    [{alert_id: "new-beat", action: "heartbeat", period_seconds: 5}, "/period_seconds"],
    [{alert_id: "Not A Slug", action: "heartbeat", period_seconds: 60}, "/alert_id"],
    [{version: "4", alerts: [{status: "firing", fingerprint: "f"}]}, "/version"],
    [[{alert_id: "a", action: "fire", title: "x"}], ""]
  ])("refuses %j at %s and changes nothing", async (body, pointer) => {
    const before = await journalCounts(gw);
    const config = readFileSync(join(gw.dataDir, "config.json"), "utf8");
    const answer = await sendEvent(body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_request");
    expect(pointers(answer)).toContain(pointer);
    expect(await journalCounts(gw)).toEqual(before);
    expect(readFileSync(join(gw.dataDir, "config.json"), "utf8")).toBe(config);
  });

  it("refuses malformed JSON and non-JSON bodies", async () => {
    const malformed = await gw.call("POST", eventsPath(generic.id), {
      key: sender,
      raw: "{not json",
      headers: {"Content-Type": "application/json"}
    });
    expect(malformed.body.code).toBe("malformed_json");
    const text = await gw.call("POST", eventsPath(generic.id), {
      key: sender,
      raw: "fire",
      headers: {"Content-Type": "text/plain"}
    });
    expect(text.status).toBe(415);
  });
});

describe("alertmanager events", () => {
  let prometheus: {id: string; url: string};
  const alert = (
    fingerprint: string,
    status: string,
    labels: Record<string, string>,
    annotations: Record<string, string> = {}
  ) => ({
    status,
    labels,
    annotations,
    startsAt: "2026-03-02T09:00:00Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: `http://prometheus.factory.lan/graph?g0.expr=${fingerprint}`,
    fingerprint
  });
  const webhook = (status: string, alerts: unknown[]) => ({
    receiver: "klaxon",
    status,
    alerts,
    groupLabels: {alertname: "x"},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.factory.lan",
    version: "4",
    groupKey: "{}:{}",
    truncatedAlerts: 0
  });

  beforeAll(async () => {
    prometheus = (
      await gw.call("POST", "/api/v1/integrations", {
        body: {name: "prometheus", kind: "alertmanager", target, default_priority: "low"}
      })
    ).body;
  });

  it("turns each alert of a group into a notification and resolves them when Alertmanager does", async () => {
    const alerts = [
      alert(
        "a1b2c3d4e5f60001",
        "firing",
        {alertname: "DiskFull", severity: "critical", instance: "db1", job: "node"},
        {summary: "db1 disk 97% full", description: "long text"}
      ),
      alert(
        "a1b2c3d4e5f60002",
        "firing",
        {alertname: "HighLatency", severity: "warning", env: "prod"},
        {description: "p99 over 2 s"}
      ),
      alert("a1b2c3d4e5f60003", "firing", {alertname: "Watchdog", severity: "whatever"})
    ];
    const fired = await gw.call("POST", urlPath(prometheus.url), {key: null, body: webhook("firing", alerts)});
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    expect(
      fired.body.results.map((result: {alert_id: string; outcome: string}) => [result.alert_id, result.outcome])
    ).toEqual([
      ["a1b2c3d4e5f60001", "created"],
      ["a1b2c3d4e5f60002", "created"],
      ["a1b2c3d4e5f60003", "created"]
    ]);
    const [disk, latency, watchdog] = await Promise.all(
      fired.body.results.map(
        async (result: {notification_uuid: string}) =>
          (await gw.call("GET", `/api/v1/notifications/${result.notification_uuid}`)).body
      )
    );
    expect(disk).toMatchObject({
      message: "DiskFull: db1 disk 97% full",
      priority: "critical",
      link: alerts[0].generatorURL,
      service: "node",
      source: "prometheus",
      dedup_key: `${prometheus.id}:a1b2c3d4e5f60001`
    });
    expect(latency).toMatchObject({message: "HighLatency: p99 over 2 s", priority: "medium", environment: "prod"});
    expect(watchdog).toMatchObject({message: "Watchdog", priority: "low"});

    const repeated = await gw.call("POST", urlPath(prometheus.url), {
      key: null,
      body: webhook("firing", alerts.slice(0, 1))
    });
    expect(repeated.body.results[0]).toMatchObject({outcome: "merged", notification_uuid: disk.id});

    const resolved = await gw.call("POST", urlPath(prometheus.url), {
      key: null,
      body: webhook(
        "resolved",
        alerts.map((each) => ({...each, status: "resolved"}))
      )
    });
    expect(resolved.body.results.map((result: {outcome: string}) => result.outcome)).toEqual([
      "resolved",
      "resolved",
      "resolved"
    ]);
    for (const id of [disk.id, latency.id, watchdog.id])
      expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.status).toBe("resolved");
  });

  it("ignores fields it does not use but refuses a body that is not version 4 or has no alerts", async () => {
    const extra = {
      ...webhook("firing", [alert("ffff000000000001", "firing", {alertname: "Extra"})]),
      futureField: {nested: true}
    };
    expect((await gw.call("POST", urlPath(prometheus.url), {key: null, body: extra})).status).toBe(202);
    for (const [body, pointer] of [
      [{...webhook("firing", []), version: "3"}, "/version"],
      [webhook("firing", []), "/alerts"],
      [webhook("firing", [{status: "firing"}]), "/alerts/0/fingerprint"],
      [webhook("firing", [{...alert("f1", "pending", {}), status: "pending"}]), "/alerts/0/status"],
      [webhook("firing", [alert("f1", "firing", {severity: 3} as never)]), "/alerts/0/labels/severity"],
      [{alert_id: "a", action: "fire", title: "generic body"}, "/version"]
    ] as const) {
      const answer = await gw.call("POST", urlPath(prometheus.url), {key: null, body});
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(pointers(answer), JSON.stringify(body)).toContain(pointer);
    }
  });
});
