import {randomBytes} from "node:crypto";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import type {SmtpPeer} from "../support/smtp-peer.js";
import {startTrapGateway, type TrapGateway} from "../support/trap-gateway.js";
import {eventually} from "../support/eventually.js";
import {pointers} from "../support/problem-pointers.js";
import {sendBytes, sendTrap, type V3User} from "../support/snmptrap.js";

// An snmp_trap integration end to end: Debian's snmptrap sends v2c traps and informs and v3
// authPriv traps to the gateway's own listener on loopback, and the alerts page through the
// email channel to a real SMTP peer.
const UPS_ON_BATTERY = "1.3.6.1.2.1.33.2.1";
const UPS_ALARM_REMOVED = "1.3.6.1.2.1.33.2.4";
const UPS_ALARM_DESCR = "1.3.6.1.2.1.33.1.6.2.1.2";
const UPS_ALARM_ON_BATTERY = "1.3.6.1.2.1.33.1.6.3.2";
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const LINK_UP = "1.3.6.1.6.3.1.1.5.4";
const IF_INDEX = "1.3.6.1.2.1.2.2.1.1";
const COMMUNITY = "hall-b-traps";
const switchUser: V3User = {
  name: "core-switch",
  authProtocol: "SHA-256",
  authKey: "switch-auth-phrase",
  privProtocol: "AES",
  privKey: "switch-priv-phrase"
};

let rig: TrapGateway;
let smtp: SmtpPeer;
let gw: TestGateway;
let trapPort: number;
let integrationId: string;

beforeAll(async () => {
  rig = await startTrapGateway();
  ({gw, smtp, trapPort} = rig);
  const created = await gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "UPS and switches, hall B",
      unmapped: "keep",
      kind: "snmp_trap",
      target: rig.maria,
      default_priority: "medium",
      community: COMMUNITY,
      v3_users: [
        {
          name: switchUser.name,
          auth_protocol: "sha256",
          auth_key: switchUser.authKey,
          priv_protocol: "aes",
          priv_key: switchUser.privKey
        }
      ]
    }
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  integrationId = created.body.id;
});
afterAll(async () => {
  await rig?.stop();
});

const v2c = {version: "2c", community: COMMUNITY} as const;

async function notificationsSaying(text: string) {
  const page = await gw.call("GET", "/api/v1/notifications?limit=100");
  return (page.body.items as {message: string; status: string; occurrences: number; priority: string}[]).filter(
    (item) => item.message.includes(text)
  );
}

async function integration() {
  return (await gw.call("GET", `/api/v1/integrations/${integrationId}`)).body;
}

describe("an snmp_trap integration", () => {
  it("shows that a community and a v3 user are set, never the secrets themselves", async () => {
    const view = await integration();
    expect(view).toMatchObject({
      kind: "snmp_trap",
      community_set: true,
      v3_users: [{name: "core-switch", auth_protocol: "sha256", priv_protocol: "aes"}],
      trap_rules: []
    });
    const text = JSON.stringify(view);
    for (const secret of [COMMUNITY, switchUser.authKey, switchUser.privKey]) expect(text).not.toContain(secret);
  });

  it("pages for a UPS on battery, merges its repeats, and resolves when the alarm row goes", async () => {
    await sendTrap(trapPort, v2c, UPS_ON_BATTERY, [["1.3.6.1.2.1.33.1.2.3.0", "i", "12"]]);
    const mail = await smtp.next();
    expect(mail.envelope.to).toEqual(["maria@factory.lan"]);
    expect(mail.text).toContain("UPS on battery (127.0.0.1)");
    // The MIB resends it every minute while on battery: one alert, counted.
    await sendTrap(trapPort, v2c, UPS_ON_BATTERY, [["1.3.6.1.2.1.33.1.2.3.0", "i", "11"]]);
    const [merged] = await eventually(
      "the repeat merged",
      () => notificationsSaying("UPS on battery"),
      (items) => items.length === 1 && items[0].occurrences === 2
    );
    expect(merged.status).toBe("notifying");
    await sendTrap(trapPort, {...v2c, inform: true}, UPS_ALARM_REMOVED, [
      [`${UPS_ALARM_DESCR}.1`, "o", UPS_ALARM_ON_BATTERY]
    ]);
    await eventually(
      "resolved",
      () => notificationsSaying("UPS on battery"),
      (items) => items[0]?.status === "resolved"
    );
    expect(smtp.messages.filter((sent) => sent.text?.includes("UPS on battery"))).toHaveLength(1);
  });

  it("pairs linkDown and linkUp of one port, sent by a v3 authPriv user", async () => {
    const v3 = {version: "3", user: switchUser} as const;
    await sendTrap(trapPort, v3, LINK_DOWN, [[`${IF_INDEX}.7`, "i", "7"]]);
    await sendTrap(trapPort, v3, LINK_DOWN, [[`${IF_INDEX}.8`, "i", "8"]]);
    await eventually(
      "two ports down",
      () => notificationsSaying("Link down on interface"),
      (items) => items.length === 2
    );
    await sendTrap(trapPort, v3, LINK_UP, [[`${IF_INDEX}.7`, "i", "7"]]);
    const items = await eventually(
      "port 7 back up",
      () => notificationsSaying("Link down on interface"),
      (list) => list.some((item) => item.status === "resolved")
    );
    expect(Object.fromEntries(items.map((item) => [item.message, item.status === "resolved"]))).toEqual({
      "Link down on interface 7 (127.0.0.1)": true,
      "Link down on interface 8 (127.0.0.1)": false
    });
  });

  it("keeps an unknown trap in the integration's log, with its bindings", async () => {
    await sendTrap(trapPort, v2c, "1.3.6.1.4.1.8072.9999.42", [["1.3.6.1.2.1.1.5.0", "s", "boiler-2"]]);
    const log = await eventually(
      "the kept trap",
      async () => (await gw.call("GET", `/api/v1/integrations/${integrationId}/log`)).body.items,
      (items: unknown[]) => items.length === 1
    );
    expect(log[0]).toMatchObject({
      outcome: "unmapped",
      origin: "127.0.0.1",
      summary: "1.3.6.1.4.1.8072.9999.42",
      body: expect.stringContaining("1.3.6.1.2.1.1.5.0 = boiler-2")
    });
    expect((await integration()).stats.unmapped).toBe(1);
  });

  it("counts a wrong community and random bytes as refused, and goes on serving", async () => {
    const refused = async () => {
      const text = (await gw.call("GET", "/metrics")).body as string;
      return Number(/klaxon_integration_messages_total\{kind="snmp_trap",outcome="refused"\} (\d+)/.exec(text)?.[1]);
    };
    const before = await refused();
    await sendTrap(trapPort, {version: "2c", community: "public"}, LINK_DOWN, [[`${IF_INDEX}.1`, "i", "1"]]);
    await sendBytes(trapPort, [randomBytes(40), randomBytes(200), Buffer.from([0x30, 0x82, 0xff, 0xff])]);
    await eventually("four refusals counted", refused, (count) => count === before + 4);
    expect(await notificationsSaying("interface 1 ")).toEqual([]);
    expect((await gw.call("GET", "/healthz")).status).toBe(200);
    await sendTrap(trapPort, v2c, LINK_UP, [[`${IF_INDEX}.8`, "i", "8"]]);
    await eventually(
      "still serving",
      () => notificationsSaying("Link down on interface 8"),
      (items) => items[0]?.status === "resolved"
    );
  });

  it("refuses a community or a v3 user name that another trap integration already has", async () => {
    const {target} = await integration();
    const answer = await gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "second",
        kind: "snmp_trap",
        target,
        community: COMMUNITY,
        v3_users: [
          {name: "core-switch", auth_protocol: "sha", auth_key: "12345678", priv_protocol: "aes", priv_key: "12345678"}
        ]
      }
    });
    expect(answer.status).toBe(400);
    expect(pointers(answer)).toEqual(["/community", "/v3_users/0/name"]);
    const neither = await gw.call("POST", "/api/v1/integrations", {body: {name: "third", kind: "snmp_trap", target}});
    expect(pointers(neither)).toEqual(["/community"]);
    const wrongKind = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "fourth", kind: "generic", target, community: "other"}
    });
    expect(pointers(wrongKind)).toEqual(["/community"]);
  });

  it("takes a new community and rules by merge patch, from the next trap on", async () => {
    const patched = await gw.call("PATCH", `/api/v1/integrations/${integrationId}`, {
      body: {
        community: "hall-b-rotated",
        trap_rules: [
          {
            trap_oid: "1.3.6.1.4.1.8072.9999.42",
            action: "fire",
            alert_key: "boiler/{1.3.6.1.2.1.1.5}",
            title: "Boiler {1.3.6.1.2.1.1.5} tripped",
            priority: "critical"
          }
        ]
      }
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({community_set: true, v3_users: [{name: "core-switch"}]});
    expect(JSON.stringify(patched.body)).not.toContain("hall-b-rotated");
    await sendTrap(trapPort, v2c, "1.3.6.1.4.1.8072.9999.42", [["1.3.6.1.2.1.1.5.0", "s", "boiler-2"]]);
    await sendTrap(trapPort, {version: "2c", community: "hall-b-rotated"}, "1.3.6.1.4.1.8072.9999.42", [
      ["1.3.6.1.2.1.1.5.0", "s", "boiler-3"]
    ]);
    const paged = await eventually(
      "the rule's alert",
      () => notificationsSaying("tripped"),
      (items) => items.length === 1
    );
    // The old community is refused: boiler-2's trap made no alert.
    expect(paged[0]).toMatchObject({message: "Boiler boiler-3 tripped (127.0.0.1)", priority: "critical"});
  });
});
