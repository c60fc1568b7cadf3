import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {emailRig, eventually, type EmailRig} from "../channels/email-rig.js";
import {freePort, startMosquitto, type Mosquitto} from "../support/mosquitto.js";
import {sendWithSmtplib} from "../support/smtplib.js";
import {freeUdpPort, sendTrap} from "../support/snmptrap.js";

// A device message that no rule maps pages the integration's target (unmapped: "page", the
// default), through each real door: the SMTP listener (Python smtplib), Mosquitto, snmptrap.
// "keep" keeps it silently in the log, and then /readyz warns. One gateway for the file.

const DOMAIN = "alerts.plant.lan";
let broker: Mosquitto;
let rig: EmailRig;
let smtpPort: number;
let trapPort: number;
let target: string;

beforeAll(async () => {
  broker = await startMosquitto();
  smtpPort = await freePort();
  trapPort = await freeUdpPort();
  rig = await emailRig({
    inboundEmail: {port: smtpPort, address: "127.0.0.1", domain: DOMAIN},
    settings: {snmp: {trap_port: trapPort, trap_address: "127.0.0.1"}}
  });
  target = await rig.recipient({name: "Storage admin", email: "storage@factory.lan"});
});
afterAll(async () => {
  await rig.gw.stop();
  await rig.peer.stop();
  await broker.stop();
});

async function integration(fields: Record<string, unknown>): Promise<{id: string; address: string}> {
  const created = await rig.gw.call("POST", "/api/v1/integrations", {
    body: {target, default_priority: "high", ...fields}
  });
  expect(created.status).toBe(201);
  return created.body;
}

/** The open alerts an integration raised, once each has paged. */
async function alertsOf(id: string): Promise<Array<Record<string, any>>> {
  await rig.gw.gateway.services.runner.idle();
  const items = (await rig.gw.call("GET", "/api/v1/notifications?limit=100")).body.items as Array<Record<string, any>>;
  return items.filter((item) => item.integration_id === id || String(item.dedup_key ?? "").includes(id));
}

const logged = (pattern: RegExp) => rig.gw.logLines.filter((line) => pattern.test(line));

describe("a device message no rule maps", () => {
  it("from a NAS by email pages the integration's target at its default priority, repeats merging", async () => {
    const nas = await integration({name: "nas-01", kind: "email"});
    expect((await rig.gw.call("GET", `/api/v1/integrations/${nas.id}`)).body.unmapped).toBe("page");
    const mail = {shape: "plain" as const, from: "nas-01@plant.lan", to: [nas.address], subject: "RAID degraded"};
    const sent = await sendWithSmtplib({
      port: smtpPort,
      mails: [
        {...mail, text: "Volume 1 lost disk 3."},
        {...mail, text: "Volume 1 lost disk 3."}
      ]
    });
    expect(sent).toEqual([{ok: true}, {ok: true}]);
    const paged = await eventually(
      "the page",
      () => rig.peer.messages.filter((m) => m.subject.includes("RAID")),
      (m) => m.length >= 1
    );
    expect(paged[0].envelope.to).toEqual(["storage@factory.lan"]);
    const alerts = await eventually(
      "the alert",
      () => alertsOf(nas.id),
      (items) => items.length === 1
    );
    expect(alerts[0]).toMatchObject({
      priority: "high",
      message: "RAID degraded: Volume 1 lost disk 3.",
      source: "nas-01@plant.lan"
    });
    expect(logged(/device message unmapped/).join("\n")).toMatch(
      /"sender":"nas-01@plant\.lan".*"integration":"nas-01".*paged/
    );
  });

  it("as MQTT text pages, its topic as the source", async () => {
    const plc = await integration({
      name: "press line",
      kind: "mqtt",
      broker_url: broker.url,
      topics: ["plant/press/#"]
    });
    await eventually(
      "broker connection",
      async () => (await rig.gw.call("GET", `/api/v1/integrations/${plc.id}`)).body.connection?.connected,
      Boolean
    );
    broker.publish("plant/press/4/alarm", "OVERTEMP hydraulic oil");
    const alerts = await eventually(
      "the alert",
      () => alertsOf(plc.id),
      (items) => items.length === 1
    );
    // The topic is the alert's source, which every page names: the message does not say it again.
    expect(alerts[0]).toMatchObject({
      priority: "high",
      message: "OVERTEMP hydraulic oil",
      source: "plant/press/4/alarm"
    });
  });

  it("as an unknown trap pages, titled by the trap", async () => {
    const traps = await integration({name: "hall C", kind: "snmp_trap", community: "hall-c-traps"});
    await sendTrap(trapPort, {version: "2c", community: "hall-c-traps"}, "1.3.6.1.4.1.8072.9999.42", [
      ["1.3.6.1.2.1.1.5.0", "s", "boiler-2"]
    ]);
    const alerts = await eventually(
      "the alert",
      () => alertsOf(traps.id),
      (items) => items.length === 1
    );
    // Named once: the trap's header line (name, OID, agent) says what the title and the source say.
    expect(alerts[0]).toMatchObject({
      priority: "high",
      message: "1.3.6.1.4.1.8072.9999.42: 1.3.6.1.2.1.1.5.0 = boiler-2",
      source: "127.0.0.1"
    });
    // A refused packet (a community no integration has) writes its log line too.
    await sendTrap(trapPort, {version: "2c", community: "guess"}, "1.3.6.1.4.1.8072.9999.42");
    await eventually(
      "the refusal's log line",
      () => logged(/device message refused.*"sender":"127\.0\.0\.1"/),
      (lines) => lines.length === 1
    );
  });

  it('with unmapped: "keep" is only kept, logged, and warned about on /readyz', async () => {
    const quiet = await integration({name: "weekly reports", kind: "email", unmapped: "keep"});
    expect((await rig.gw.call("GET", "/readyz", {key: null})).body.counts.unmapped_kept).toBe(0);
    const sent = await sendWithSmtplib({
      port: smtpPort,
      mails: [
        {shape: "plain", from: "reports@plant.lan", to: [quiet.address], subject: "Weekly report", text: "all fine"}
      ]
    });
    expect(sent).toEqual([{ok: true}]);
    const ready = await eventually(
      "the warning",
      () => rig.gw.call("GET", "/readyz"),
      (answer) => answer.body.unmapped_kept.length === 1
    );
    expect(ready.status).toBe(200);
    expect(ready.body.unmapped_kept[0]).toMatchObject({integration_id: quiet.id, name: "weekly reports", messages: 1});
    expect((await rig.gw.call("GET", "/readyz", {key: null})).body.counts.unmapped_kept).toBe(1);
    expect(await alertsOf(quiet.id)).toEqual([]);
    expect(logged(/device message unmapped/).join("\n")).toMatch(/"integration":"weekly reports".*nobody paged/);
  });
});
