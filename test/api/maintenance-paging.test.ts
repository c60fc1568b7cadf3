import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, type TestGateway} from "../support/gateway.js";
import {integrationRig} from "../support/integration-rig.js";

// What a maintenance window does on the paging path, on a manual clock with log drivers: held
// alerts are recorded as suppressed and page nobody; at the window's end (early, by the clock, or
// found after a restart) integration alerts still firing and heartbeats still down page from the
// first step; a direct send stays suppressed; alerts the window does not cover page as usual.
const {clock, start, sendEvent} = integrationRig();
let gw: TestGateway;
let target: string;
let integrationId: string;
let bystander: string;

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  let generic: {id: string};
  ({gw, target, generic} = await start());
  integrationId = generic.id;
  bystander = await createRecipient(gw, {name: "Press hall"});
});
afterAll(() => gw.stop());

async function openWindow(scope: Record<string, unknown>, minutes = 60): Promise<string> {
  const answer = await gw.call("POST", "/api/v1/maintenance", {
    body: {ends_at: iso(clock.now() + minutes * MINUTE), reason: "planned shutdown", ...scope}
  });
  expect(answer.status).toBe(201);
  return answer.body.uuid;
}

async function fire(alertId: string): Promise<{outcome: string; notification_uuid: string}> {
  const answer = await sendEvent({alert_id: alertId, action: "fire", title: `${alertId} stopped`});
  expect(answer.status).toBe(202);
  return answer.body.results[0];
}

/** The notification once the runner has done everything due. */
async function notification(id: string) {
  await gw.gateway.services.runner.idle();
  return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
}

function eventsOf(id: string): Array<{type: string; data: Record<string, unknown>}> {
  const rows = gw.gateway.journal.db
    .prepare("SELECT body FROM events WHERE notification_id = ? ORDER BY sequence")
    .all(id) as Array<{body: string}>;
  return rows.map((row) => JSON.parse(row.body));
}

const release = () => gw.gateway.services.maintenance.releaser.tick();

describe("maintenance windows on the paging path", () => {
  it("holds an integration alert (recorded, nobody paged), merges its repeat, and pages it when ended early", async () => {
    const window = await openWindow({integrations: [integrationId]});
    const held = await fire("line-3-stop");
    expect(held.outcome).toBe("created");
    const heldNow = await notification(held.notification_uuid);
    expect(heldNow).toMatchObject({
      status: "suppressed",
      attempts: [],
      escalation: {step: 0, steps_carried: 0, next_step_at: null}
    });
    expect(eventsOf(held.notification_uuid).map((event) => [event.type, event.data.maintenance_window])).toEqual([
      ["notification.suppressed", window]
    ]);

    expect(await fire("line-3-stop")).toMatchObject({outcome: "merged", notification_uuid: held.notification_uuid});
    expect(await notification(held.notification_uuid)).toMatchObject({status: "suppressed", occurrences: 2});

    // Nothing else is silenced: a send to another target pages at once.
    const other = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: bystander, message: "Press 7 oil low", priority: "high"}
    });
    expect((await notification(other.body.notification_uuid)).attempts.length).toBeGreaterThan(0);

    expect((await gw.call("POST", `/api/v1/maintenance/${window}/end`)).status).toBe(200);
    const released = await notification(held.notification_uuid);
    expect(released.status).toBe("notifying");
    expect(released.attempts.length).toBeGreaterThan(0);
    expect(released.attempts.every((attempt: {step: number}) => attempt.step === 1)).toBe(true);
    expect(eventsOf(held.notification_uuid).map((event) => event.type)).toEqual(
      expect.arrayContaining(["notification.suppressed", "notification.released", "escalation.step"])
    );
    await gw.call("POST", `/api/v1/notifications/${held.notification_uuid}/resolve`);
  });

  it("releases at the window's end by the clock, except what was resolved meanwhile", async () => {
    await openWindow({integrations: [integrationId]}, 30);
    const stillFiring = await fire("kiln-temp");
    // A repeat at a higher severity raises the held alert without paging; the release pages at it.
    await sendEvent({alert_id: "kiln-temp", action: "fire", title: "kiln-temp stopped", severity: "critical"});
    expect(await notification(stillFiring.notification_uuid)).toMatchObject({
      status: "suppressed",
      priority: "critical",
      attempts: []
    });
    const resolvedMeanwhile = await fire("kiln-door");
    expect((await sendEvent({alert_id: "kiln-door", action: "resolve"})).body.results[0].outcome).toBe("resolved");

    clock.advance(30 * MINUTE - 1);
    await release();
    expect((await notification(stillFiring.notification_uuid)).status).toBe("suppressed");
    clock.advance(1);
    await release();
    const paged = await notification(stillFiring.notification_uuid);
    expect(paged).toMatchObject({status: "notifying", priority: "critical"});
    expect(paged.attempts.length).toBeGreaterThan(0);
    expect(await notification(resolvedMeanwhile.notification_uuid)).toMatchObject({status: "resolved", attempts: []});
    await gw.call("POST", `/api/v1/notifications/${stillFiring.notification_uuid}/resolve`);
  });

  it("keeps a direct send suppressed after the window, matched by source or by target", async () => {
    await openWindow({sources: ["plc-line-3"], targets: [bystander]}, 10);
    const bySource = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: target, message: "Line 3 PLC offline", priority: "critical", source: "plc-line-3"}
    });
    expect(bySource.status).toBe(202);
    expect(bySource.body.status).toBe("suppressed");
    const byTarget = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: bystander, message: "Press hall door open", priority: "low"}
    });
    expect(byTarget.body.status).toBe("suppressed");

    clock.advance(10 * MINUTE);
    await release();
    for (const id of [bySource.body.notification_uuid, byTarget.body.notification_uuid])
      expect(await notification(id)).toMatchObject({status: "suppressed", attempts: []});
    const listed = await gw.call("GET", `/api/v1/notifications?status=suppressed&recipient_uuid=${bystander}`);
    expect(listed.body.items.map((item: {id: string}) => item.id)).toEqual([byTarget.body.notification_uuid]);
  });

  it("records a heartbeat that goes down in the window and pages only after it, if still down", async () => {
    for (const name of ["boiler-2", "boiler-3"])
      expect(
        (await gw.call("POST", "/api/v1/heartbeats", {body: {name, period_seconds: 60, grace_seconds: 30, target}}))
          .status
      ).toBe(201);
    await gw.call("POST", "/api/v1/heartbeats/boiler-2/ping");
    await gw.call("POST", "/api/v1/heartbeats/boiler-3/ping");
    await openWindow({heartbeats: ["boiler-2", "boiler-3"]}, 10);

    clock.advance(90_000);
    await gw.gateway.heartbeats.monitor.tick();
    const downPages = await Promise.all(
      ["boiler-2", "boiler-3"].map(async (name) => (await gw.call("GET", `/api/v1/heartbeats/${name}`)).body)
    );
    for (const heartbeat of downPages) {
      expect(heartbeat.status).toBe("down");
      expect(await notification(heartbeat.notification_id)).toMatchObject({status: "suppressed", attempts: []});
    }
    await gw.call("POST", "/api/v1/heartbeats/boiler-3/ping");

    clock.advance(10 * MINUTE);
    await release();
    const [stillDown, cameBack] = downPages.map((heartbeat) => heartbeat.notification_id);
    const paged = await notification(stillDown);
    expect(paged.status).toBe("notifying");
    expect(paged.attempts.length).toBeGreaterThan(0);
    expect(await notification(cameBack)).toMatchObject({status: "resolved", attempts: []});
    await gw.call("POST", `/api/v1/notifications/${stillDown}/resolve`);
  });

  it("releases after a restart what a window that ended while the gateway was stopped held", async () => {
    const window = await openWindow({integrations: [integrationId]}, 5);
    const held = await fire("compressor-1");
    await gw.restart();
    expect((await notification(held.notification_uuid)).status).toBe("suppressed");

    await gw.gateway.stop();
    clock.advance(20 * MINUTE);
    await gw.restart();
    const paged = await notification(held.notification_uuid);
    expect(paged.status).toBe("notifying");
    expect(paged.attempts.length).toBeGreaterThan(0);
    expect((await gw.call("GET", `/api/v1/maintenance/${window}`)).body.status).toBe("ended");
  });
});
