import {afterAll, afterEach, describe, expect, it} from "vitest";
import {selfCheck, type ReplicationHealth} from "../../src/services/operations/self-monitor-conditions.js";
import {startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {eventually} from "../support/eventually.js";

afterAll(endOrphanedLitestreams);

const LIMITS = {signal_min_dbm: -105, outbox_max_age_minutes: 60};
const quiet = {channels: [], outbox: {pending: 0, oldest: null}, undeliverable: [], scheduleGaps: [], nowMs: 0};
const standby = (health: Partial<ReplicationHealth>): ReplicationHealth => ({
  peer: "http://10.0.0.12:8080",
  silentSeconds: 1,
  lagSeconds: 0.4,
  alarmSeconds: 60,
  ...health
});
const replicationProblem = (health: ReplicationHealth | null) =>
  selfCheck({...quiet, replication: health}, LIMITS).find((condition) => condition.key === "replication:standby");

describe("the active's alarm about its standby", () => {
  it("is healthy while the standby answers and its copy keeps up", () => {
    expect(replicationProblem(standby({}))).toEqual({key: "replication:standby", problem: null});
    expect(replicationProblem(standby({lagSeconds: null}))).toEqual({key: "replication:standby", problem: null});
  });

  it("names a silent standby, before a lagging copy", () => {
    expect(replicationProblem(standby({silentSeconds: 61, lagSeconds: 500}))?.problem).toBe(
      "the standby box http://10.0.0.12:8080 has not answered for 61 s: nothing would take over if this box failed"
    );
    expect(replicationProblem(standby({lagSeconds: 75}))?.problem).toBe(
      "the standby's copy of the journal is 75 s behind: replication (Litestream) is not reaching it"
    );
  });

  it("is not a condition on a single box", () => {
    expect(replicationProblem(null)).toBeUndefined();
  });
});

let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

describe("an active box whose standby never answers", () => {
  it(
    "pages the self-monitoring recipient and shows the silence on /readyz and /metrics",
    {timeout: 60_000},
    async () => {
      const dataDir = tempDir();
      const replication = {
        role: "active" as const,
        box_name: "klaxon-a",
        // Nothing listens there: the standby is gone.
        peer: "http://127.0.0.1:9",
        replica: tempDir(),
        incoming: tempDir(),
        litestream: requireLitestream(),
        lag_alarm_seconds: 1
      };
      // The admin recipient must exist before the gateway that pages it starts.
      const setup = await startTestGateway({replication}, {dataDir});
      const admin = (
        await setup.call("POST", "/api/v1/recipients", {body: {name: "Site admin", email: "admin@plant.lan"}})
      ).body.uuid;
      await setup.gateway.stop();
      gw = await startTestGateway({replication, self_monitoring: {recipient: admin}}, {dataDir});
      const current = gw;

      const silent = await eventually(
        "the standby's silence",
        async () => (await current.call("GET", "/readyz")).body.replication.standby,
        (standby) => standby.silent_seconds > 1
      );
      expect(silent.lag_seconds).toBeNull();
      const metrics = (await current.call("GET", "/metrics")).body as string;
      expect(metrics).toMatch(/^klaxon_replication_standby_silent_seconds \d/m);
      expect(metrics).toContain("klaxon_replication_lag_seconds NaN");

      await current.gateway.operations.selfMonitor.tick();
      const alerts = (await current.call("GET", `/api/v1/notifications?recipient_uuid=${admin}&limit=10`)).body.items;
      // Among the self-monitor's other pages (no channel is set up here), the one about the standby.
      expect(alerts.map((alert: {message: string}) => alert.message)).toContainEqual(
        expect.stringContaining("the standby box http://127.0.0.1:9 has not answered for")
      );
    }
  );
});
