import {afterEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {RecordingDriver} from "../support/recording-driver.js";
import {ManualClock} from "../../src/lib/clock.js";
import {othersWaiting, selfCheck, undeliverableKey} from "../../src/services/operations/self-monitor-conditions.js";
import {NO_CHANNEL_WATCH, setWaiting} from "../support/undeliverable.js";

/** Two channels served by one modem, whose health the test sets. */
class ModemChannel extends RecordingDriver {
  constructor(
    channel: "voice_call" | "sms",
    readonly modem: {
      port_open: boolean;
      sim: string;
      registration: string;
      signal: {rssi: number | null; dbm: number | null};
    }
  ) {
    super(channel);
  }

  details() {
    return {...this.modem, signal: {...this.modem.signal}};
  }
}

let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

const LIMITS = {signal_min_dbm: -105, outbox_max_age_minutes: 60};

interface Rig {
  gw: TestGateway;
  clock: ManualClock;
  admin: string;
  modem: ModemChannel["modem"];
  voice: ModemChannel;
  sms: ModemChannel;
  email: RecordingDriver;
  /** The self-monitor's alerts, oldest first. */
  alerts(): Promise<Array<{id: string; dedup_key: string; status: string; message: string; occurrences: number}>>;
  tick(): Promise<void>;
}

// The admin recipient must exist before the gateway that pages it starts: a first gateway on the
// same data dir creates it.
async function makeRig(adminChannels = ["voice_call", "sms", "email"]): Promise<Rig> {
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0));
  const dataDir = tempDir();
  const setup = await startTestGateway({}, {dataDir, clock, ...NO_CHANNEL_WATCH});
  const admin = (
    await setup.call("POST", "/api/v1/recipients", {
      body: {name: "Gateway admin", phone: "+4915112345678", email: "admin@factory.lan", channel_order: adminChannels}
    })
  ).body.uuid;
  await setup.gateway.stop();

  const modem = {port_open: true, sim: "ready", registration: "home", signal: {rssi: 18, dbm: -77}};
  const voice = new ModemChannel("voice_call", modem);
  const sms = new ModemChannel("sms", modem);
  const email = new RecordingDriver("email", 4);
  gw = await startTestGateway(
    {...ALL_CHANNELS_CONFIGURED, self_monitoring: {recipient: admin, ...LIMITS}},
    {dataDir, clock, drivers: () => [voice, sms, email]}
  );
  const current = gw;
  return {
    gw: current,
    clock,
    admin,
    modem,
    voice,
    sms,
    email,
    async alerts() {
      await current.gateway.services.runner.idle();
      const page = (await current.call("GET", `/api/v1/notifications?recipient_uuid=${admin}&limit=100`)).body.items;
      return page.filter((item: {source: string}) => item.source === "klaxon").reverse();
    },
    async tick() {
      await current.gateway.operations.selfMonitor.tick();
      await current.gateway.services.runner.idle();
    }
  };
}

describe("self-monitoring", () => {
  it("raises one alert per problem over a channel that still works, and resolves it when the problem clears", async () => {
    const rig = await makeRig();
    await rig.tick();
    expect(await rig.alerts()).toEqual([]);

    // The modem loses the network: both its channels go down, but one alert names the cause.
    rig.modem.registration = "searching";
    rig.voice.unavailable = rig.sms.unavailable = "the modem is not registered";
    await rig.tick();
    await rig.tick();
    let alerts = await rig.alerts();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({dedup_key: "klaxon:modem:registration", occurrences: 1, status: "notifying"});
    expect(alerts[0].message).toBe("Klaxon gateway: the modem is not registered on the mobile network (searching)");
    // Voice and SMS were skipped; email carried it.
    expect(rig.email.deliveries.map((delivery) => delivery.alerts[0].message)).toEqual([alerts[0].message]);
    expect(rig.voice.deliveries).toEqual([]);

    // Acknowledged while the problem lasts: not raised again.
    expect((await rig.gw.call("POST", `/api/v1/notifications/${alerts[0].id}/ack`)).status).toBe(200);
    await rig.tick();
    expect(await rig.alerts()).toHaveLength(1);

    // SMTP fails too: its own alert.
    rig.email.unavailable = "SMTP server refused the login";
    await rig.tick();
    alerts = await rig.alerts();
    expect(alerts.map((alert) => alert.dedup_key)).toEqual(["klaxon:modem:registration", "klaxon:channel:email"]);

    // Every channel is down, so that alert waits for one (its own wait raises nothing more). The
    // modem coming back resolves its own alert; the waiting one is carried over a voice call at
    // its next retry, at most a minute later.
    expect(alerts[1].status).toBe("notifying");
    rig.modem.registration = "home";
    rig.voice.unavailable = rig.sms.unavailable = null;
    await rig.tick();
    rig.clock.advance(60_000);
    await rig.gw.gateway.services.runner.tick();
    await rig.gw.gateway.services.runner.idle();
    expect(rig.voice.deliveries.map((delivery) => delivery.alerts[0].message)).toEqual([
      "Klaxon gateway: the email channel is unavailable: SMTP server refused the login"
    ]);
    alerts = await rig.alerts();
    expect(alerts.map((alert) => [alert.dedup_key, alert.status])).toEqual([
      ["klaxon:modem:registration", "resolved"],
      ["klaxon:channel:email", "notifying"]
    ]);
    rig.email.unavailable = null;
    await rig.tick();
    expect((await rig.alerts()).map((alert) => alert.status)).toEqual(["resolved", "resolved"]);

    // A second episode of the same problem pages again.
    rig.modem.signal.dbm = -109;
    await rig.tick();
    alerts = await rig.alerts();
    expect(alerts.at(-1)).toMatchObject({dedup_key: "klaxon:modem:signal", status: "notifying"});
    expect(alerts.at(-1)!.message).toContain("-109 dBm");
  });

  it("pages by SMS once per cause while alerts cannot reach anyone by email, and resolves it when the cause clears, across a restart", async () => {
    const rig = await makeRig(["email", "sms"]);
    const ops = (
      await rig.gw.call("POST", "/api/v1/recipients", {
        body: {name: "Ops", email: "ops@factory.lan", channel_order: ["email"]}
      })
    ).body.uuid;
    const send = async (message: string) =>
      (
        await rig.gw.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: ops, message, priority: "high"}
        })
      ).body.notification_uuid as string;
    const cause = {channel: "email" as const, reason: "SMTP server refused the login"};
    // The admin already knows SMTP fails (acknowledged), but not yet that alerts are stuck behind it.
    rig.email.unavailable = cause.reason;
    await rig.tick();
    expect((await rig.gw.call("POST", `/api/v1/notifications/${(await rig.alerts())[0].id}/ack`)).status).toBe(200);
    await setWaiting(rig.gw, await send("press 4 stopped"), [cause]);
    await rig.tick();
    await rig.tick();
    let alerts = await rig.alerts();
    expect(alerts.map((alert) => [alert.dedup_key, alert.status])).toEqual([
      ["klaxon:channel:email", "acknowledged"],
      [`klaxon:${undeliverableKey(cause)}`, "notifying"]
    ]);
    expect(alerts[1].message).toBe("Klaxon gateway: 1 alert cannot reach anyone: SMTP server refused the login");
    // Email is the broken channel: both pages went out as SMS.
    expect(rig.sms.deliveries.map((delivery) => delivery.alerts[0].message)).toEqual(
      alerts.map((alert) => alert.message)
    );

    // More alerts waiting for the same cause page nobody again.
    await setWaiting(rig.gw, await send("press 5 stopped"), [cause]);
    await rig.tick();
    expect(await rig.alerts()).toHaveLength(2);
    expect(rig.sms.deliveries).toHaveLength(2);

    // After a restart the open page is adopted, not sent again, and resolved once the cause is gone.
    await rig.gw.restart();
    await rig.tick();
    expect(await rig.alerts()).toHaveLength(2);
    for (const alert of (await rig.gw.call("GET", `/api/v1/notifications?recipient_uuid=${ops}`)).body.items)
      await setWaiting(rig.gw, alert.id, null);
    await rig.tick();
    alerts = await rig.alerts();
    expect(alerts.map((alert) => [alert.dedup_key, alert.status])).toEqual([
      ["klaxon:channel:email", "acknowledged"],
      [`klaxon:${undeliverableKey(cause)}`, "resolved"]
    ]);
    expect(
      rig.gw.logLines.some(
        (line) => line.includes("self-monitoring resolved an alert") && line.includes(undeliverableKey(cause))
      )
    ).toBe(true);
  });

  it("pages out of band through the modem when the journal cannot commit, once per outage", async () => {
    const rig = await makeRig();
    const db = rig.gw.gateway.journal.db;
    db.pragma(`max_page_count = ${Number(db.pragma("page_count", {simple: true}))}`);
    try {
      let status = 202;
      for (let i = 0; i < 200 && status !== 503; i++) {
        status = (
          await rig.gw.call("POST", "/api/v1/notifications/send", {
            body: {recipient_uuid: rig.admin, message: "x".repeat(3000), priority: "low"}
          })
        ).status;
      }
      expect(status).toBe(503);
      const smsBefore = rig.sms.deliveries.length;
      await rig.tick();
      await rig.tick();
      const pages = rig.sms.deliveries.slice(smsBefore);
      expect(pages).toHaveLength(1);
      expect(pages[0]).toMatchObject({channel: "sms", contact: "+4915112345678", recipient: {uuid: rig.admin}});
      expect(pages[0].alerts[0].message).toContain("the journal cannot commit");
      expect(rig.gw.logLines.some((line) => line.includes("self-monitoring paged out of band"))).toBe(true);
    } finally {
      db.pragma("max_page_count = 1073741823");
    }
    await rig.tick();
    expect(rig.gw.logLines.some((line) => line.includes("self-monitoring: the journal commits again"))).toBe(true);
  });

  it("does nothing while no recipient is configured", async () => {
    gw = await startTestGateway();
    expect(gw.gateway.operations.selfMonitor.enabled).toBe(false);
    await gw.gateway.operations.selfMonitor.tick();
    expect((await gw.call("GET", "/api/v1/notifications")).body.items).toEqual([]);
  });
});

describe("selfCheck", () => {
  const modem = (fields: Record<string, unknown>) => ({
    channel: "voice_call" as const,
    available: true,
    reason: null,
    details: {port_open: true, sim: "ready", registration: "home", signal: {dbm: -80}, ...fields}
  });
  const now = Date.UTC(2026, 0, 1, 12);
  const problems = (input: Partial<Parameters<typeof selfCheck>[0]>) =>
    selfCheck(
      {channels: [], outbox: {pending: 0, oldest: null}, undeliverable: [], scheduleGaps: [], nowMs: now, ...input},
      LIMITS
    ).filter((condition) => condition.problem !== null);

  it.each([
    [{sim: "not_inserted"}, "modem:sim", "the modem's SIM is not ready (not_inserted)"],
    [{port_open: false}, "modem:port", "the modem's serial port is not open (unplugged?)"],
    [{registration: "denied"}, "modem:registration", "the modem is not registered on the mobile network (denied)"],
    [{signal: {dbm: -111}}, "modem:signal", "the modem's signal is too weak (-111 dBm, below -105 dBm)"]
  ])("names modem trouble by its cause: %j", (fields, key, problem) => {
    expect(problems({channels: [modem(fields)]})).toEqual([{key, problem}]);
  });

  it("treats a modem not yet queried (unknown) and roaming as healthy", () => {
    expect(problems({channels: [modem({sim: "unknown", registration: "roaming", signal: {dbm: null}})]})).toEqual([]);
  });

  it("raises a webhook backlog only past its age limit", () => {
    const oldest = (minutes: number) => ({pending: 3, oldest: new Date(now - minutes * 60_000).toISOString()});
    expect(problems({outbox: oldest(60)})).toEqual([]);
    expect(problems({outbox: oldest(61)})).toEqual([
      {key: "outbox:backlog", problem: "3 webhook deliveries are waiting, the oldest for 61 minutes"}
    ]);
  });

  const smtp = {channel: "email" as const, reason: "SMTP is not configured (smtp.host and smtp.from)"};
  const modemDown = {channel: "sms" as const, reason: "the modem is not registered on the mobile network (searching)"};

  it("names each cause that leaves alerts undeliverable, with its own key, and what waits once someone was reached", () => {
    expect(
      problems({
        undeliverable: [
          {...smtp, notifications: 3, reached: 0},
          {...modemDown, notifications: 1, reached: 1}
        ]
      })
    ).toEqual([
      {
        key: undeliverableKey(smtp),
        problem: "3 alerts cannot reach anyone: SMTP is not configured (smtp.host and smtp.from)"
      },
      {
        key: undeliverableKey(modemDown),
        problem: "1 alert waits for its sms step: the modem is not registered on the mobile network (searching)"
      }
    ]);
    expect(undeliverableKey(smtp)).toMatch(/^undeliverable:email:[0-9a-f]{12}$/);
    expect(undeliverableKey({...smtp, channel: "sms"})).not.toBe(undeliverableKey(smtp));
  });

  it("names each schedule with nobody on call in the next 14 days, with or without a fallback", () => {
    const gap = {
      uuid: "s-1",
      name: "Line 3",
      starts_at: "2026-01-02T21:00:00.000Z",
      ends_at: "2026-01-03T05:00:00.000Z"
    };
    expect(
      problems({
        scheduleGaps: [
          {...gap, gaps: 1, fallback: "f-1"},
          {...gap, uuid: "s-2", name: "Line 4", gaps: 3, fallback: null}
        ]
      })
    ).toEqual([
      {
        key: "schedule-gap:s-1",
        problem:
          "schedule Line 3 has nobody on call from 2026-01-02T21:00:00.000Z to 2026-01-03T05:00:00.000Z; its fallback f-1 is paged then"
      },
      {
        key: "schedule-gap:s-2",
        problem:
          "schedule Line 4 has nobody on call from 2026-01-02T21:00:00.000Z to 2026-01-03T05:00:00.000Z (and 2 more gap(s) within 14 days); it has no fallback, so an alert sent to it then pages nobody"
      }
    ]);
  });

  it("does not count the self-monitor's own pages waiting for the same cause", () => {
    const reasons = [
      {...smtp, notifications: 2, reached: 0},
      {...modemDown, notifications: 1, reached: 0}
    ];
    expect(othersWaiting(reasons, [[smtp, modemDown], []])).toEqual([{...smtp, notifications: 1, reached: 0}]);
    expect(othersWaiting(reasons, [[smtp], [smtp]])).toEqual([{...modemDown, notifications: 1, reached: 0}]);
  });
});
