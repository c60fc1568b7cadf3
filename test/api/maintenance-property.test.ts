import {afterAll, beforeAll, describe, expect, it} from "vitest";
import fc from "fast-check";
import {createRecipient, type TestGateway} from "../support/gateway.js";
import {integrationRig} from "../support/integration-rig.js";

// Generated sequences of windows opening and ending (early and by the clock), integration alerts
// firing and resolving, and direct sends, on one gateway with a manual clock. After every step:
// an alert is held exactly when an active window covers it; no held alert has an attempt; every
// released alert has paged or waits in a storm behind an open alert to the same person. At the end of each sequence, with every window over, no integration
// alert still firing is held.
const {clock, start, sendEvent} = integrationRig();
let gw: TestGateway;
let target: string;
let integrationId: string;
let other: string;

const MINUTE = 60_000;

beforeAll(async () => {
  let generic: {id: string};
  ({gw, target, generic} = await start());
  integrationId = generic.id;
  other = await createRecipient(gw, {name: "Boiler house"});
});
afterAll(() => gw.stop());

type Scope = "integration" | "target" | "source";
type Step =
  | {kind: "open"; scope: Scope; minutes: number}
  | {kind: "fire"; alert: number}
  | {kind: "resolve"; alert: number}
  | {kind: "direct"; toOther: boolean; fromPlc: boolean}
  | {kind: "end"; window: number}
  | {kind: "wait"; minutes: number};

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("open" as const),
    scope: fc.constantFrom<Scope>("integration", "target", "source"),
    minutes: fc.integer({min: 1, max: 30})
  }),
  fc.record({kind: fc.constant("fire" as const), alert: fc.integer({min: 0, max: 2})}),
  fc.record({kind: fc.constant("resolve" as const), alert: fc.integer({min: 0, max: 2})}),
  fc.record({kind: fc.constant("direct" as const), toOther: fc.boolean(), fromPlc: fc.boolean()}),
  fc.record({kind: fc.constant("end" as const), window: fc.integer({min: 0, max: 3})}),
  fc.record({kind: fc.constant("wait" as const), minutes: fc.integer({min: 1, max: 20})})
);

interface ModelWindow {
  uuid: string;
  scope: Scope;
  endsAt: number;
}

/** Whether a window of the model covers an alert: what the gateway must decide the same way. */
function covered(windows: ModelWindow[], alert: {integration: boolean; toTarget: boolean; fromPlc: boolean}) {
  return windows.some(
    (window) =>
      window.endsAt > clock.now() &&
      ((window.scope === "integration" && alert.integration) ||
        (window.scope === "target" && alert.toTarget) ||
        (window.scope === "source" && alert.fromPlc))
  );
}

function journalState() {
  return gw.gateway.journal.db
    .prepare(
      `SELECT n.id, n.status, n.dedup_key, (SELECT COUNT(*) FROM attempts a WHERE a.notification_id = n.id) AS attempts,
        EXISTS (SELECT 1 FROM events e WHERE e.notification_id = n.id AND e.type = 'notification.released') AS released,
        EXISTS (SELECT 1 FROM escalations s JOIN notifications anchor ON anchor.id = s.grouped_with
          WHERE s.notification_id = n.id AND anchor.status IN ('queued', 'notifying')) AS in_storm
       FROM notifications n`
    )
    .all() as Array<{
    id: string;
    status: string;
    dedup_key: string | null;
    attempts: number;
    released: number;
    in_storm: number;
  }>;
}

async function checkInvariants(): Promise<void> {
  await gw.gateway.services.runner.idle();
  for (const row of journalState()) {
    if (row.status === "suppressed") expect(row.attempts, `${row.id} held yet paged`).toBe(0);
    // A released alert pages at once, unless it joined a storm: the open alert the same person is
    // being paged for carries it at its next step (or it pages alone when that one closes).
    if (row.released && !row.in_storm) expect(row.attempts, `${row.id} released but never paged`).toBeGreaterThan(0);
  }
}

let run = 0;

async function play(steps: Step[]): Promise<void> {
  run++;
  const windows: ModelWindow[] = [];
  const firing = new Set<number>();
  const alertId = (alert: number) => `run${run}-alert${alert}`;
  for (const next of steps) {
    if (next.kind === "open") {
      const scope = {
        integration: {integrations: [integrationId]},
        target: {targets: [target]},
        source: {sources: ["plc"]}
      };
      const answer = await gw.call("POST", "/api/v1/maintenance", {
        body: {ends_at: new Date(clock.now() + next.minutes * MINUTE).toISOString(), reason: "x", ...scope[next.scope]}
      });
      windows.push({uuid: answer.body.uuid, scope: next.scope, endsAt: clock.now() + next.minutes * MINUTE});
    } else if (next.kind === "fire") {
      const wasFiring = firing.has(next.alert);
      const answer = await sendEvent({alert_id: alertId(next.alert), action: "fire", title: "t", source: "plc"});
      const result = answer.body.results[0];
      firing.add(next.alert);
      if (!wasFiring) {
        expect(result.outcome).toBe("created");
        const held = covered(windows, {integration: true, toTarget: true, fromPlc: true});
        const status = (await gw.call("GET", `/api/v1/notifications/${result.notification_uuid}`)).body.status;
        expect(status === "suppressed").toBe(held);
      }
    } else if (next.kind === "resolve") {
      await sendEvent({alert_id: alertId(next.alert), action: "resolve"});
      firing.delete(next.alert);
    } else if (next.kind === "direct") {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {
          recipient_uuid: next.toOther ? other : target,
          message: "direct",
          priority: "high",
          ...(next.fromPlc ? {source: "plc"} : {})
        }
      });
      const held = covered(windows, {integration: false, toTarget: !next.toOther, fromPlc: next.fromPlc});
      expect(answer.body.status === "suppressed").toBe(held);
    } else if (next.kind === "end") {
      const window = windows[next.window];
      if (window && window.endsAt > clock.now()) {
        expect((await gw.call("POST", `/api/v1/maintenance/${window.uuid}/end`)).status).toBe(200);
        window.endsAt = clock.now();
      }
    } else {
      clock.advance(next.minutes * MINUTE);
      await gw.gateway.services.maintenance.releaser.tick();
    }
    await checkInvariants();
  }
  // Every window over: nothing still firing from the integration is held.
  clock.advance(31 * MINUTE);
  await gw.gateway.services.maintenance.releaser.tick();
  await checkInvariants();
  const held = journalState().filter(
    (row) => row.status === "suppressed" && row.dedup_key?.startsWith(`${integrationId}:run${run}-`)
  );
  expect(held).toEqual([]);
}

describe("maintenance windows, generated", () => {
  it("hold exactly what an active window covers, page nothing they hold, and page everything they release", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, {minLength: 1, maxLength: 12}), (steps) => play(steps)),
      {numRuns: 25}
    );
  }, 300_000);
});
