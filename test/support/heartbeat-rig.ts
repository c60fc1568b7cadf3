import {ManualClock} from "../../src/lib/clock.js";
import {createRecipient, startTestGateway, type TestGateway} from "./gateway.js";

/**
 * The gateway a heartbeat API test file shares between its tests: a manual clock that only moves
 * forward, one recipient ("Night shift") that heartbeats page unless a test names another, and the
 * calls those tests make. Call `start` from beforeAll; the helpers work on what it started.
 */
export function heartbeatRig() {
  const clock = new ManualClock(Date.parse("2026-01-15T10:00:00.000Z"));
  let gw: TestGateway;
  let target: string;

  async function start() {
    gw = await startTestGateway({}, {clock});
    target = await createRecipient(gw, {name: "Night shift"});
    return {gw, target};
  }

  /** Now on the rig's clock, as the API writes times. */
  const at = () => new Date(clock.now()).toISOString();
  /** One pass of the heartbeat monitor at the clock's time. */
  const sweep = () => gw.gateway.heartbeats.monitor.tick();

  async function createHeartbeat(name: string, fields: Record<string, unknown> = {}) {
    const answer = await gw.call("POST", "/api/v1/heartbeats", {
      body: {name, period_seconds: 60, grace_seconds: 30, target, ...fields}
    });
    if (answer.status !== 201)
      throw new Error(`heartbeat not created: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  const statusOf = async (name: string) => (await gw.call("GET", `/api/v1/heartbeats/${name}`)).body.status;

  /** Notifications raised for a heartbeat, newest first. */
  async function pagesOf(name: string) {
    const list = await gw.call("GET", `/api/v1/notifications?recipient_uuid=${target}&limit=200`);
    return list.body.items.filter((item: {dedup_key: string | null}) => item.dedup_key === `heartbeat:${name}`);
  }

  return {clock, start, at, sweep, createHeartbeat, statusOf, pagesOf};
}

/** The path of a ping URL, to call it on whatever address the gateway serves now. */
export const pingPath = (pingUrl: string) => new URL(pingUrl).pathname;
