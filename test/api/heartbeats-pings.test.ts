import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import {heartbeatRig, pingPath} from "../support/heartbeat-rig.js";

// What a heartbeat does as pings come and go: late, down, paged once, resolved, paused, across a
// restart, and the ping URL itself; managing heartbeats is in heartbeats-admin.test.ts.
const {clock, start, at, sweep, createHeartbeat, statusOf, pagesOf} = heartbeatRig();
let gw: TestGateway;

beforeAll(async () => {
  ({gw} = await start());
});
afterAll(() => gw.stop());

describe("heartbeats API", () => {
  it("goes new -> up -> late -> down at the exact times, pages once, and a good ping resolves the page", async () => {
    const heartbeat = await createHeartbeat("boiler-2", {priority: "critical"});
    clock.advance(3_600_000);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("new");

    const ping = await gw.call("POST", "/api/v1/heartbeats/boiler-2/ping");
    const pingedAt = clock.now();
    expect(ping.status).toBe(200);
    expect(ping.body).toEqual({name: "boiler-2", status: "up", expected_at: new Date(pingedAt + 60_000).toISOString()});
    expect((await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body).toMatchObject({
      last_ping_at: at(),
      down_at: new Date(pingedAt + 90_000).toISOString()
    });
    // /readyz shows the sweep alive and aimed no later than this heartbeat's late time.
    const sweepHealth = (await gw.call("GET", "/readyz")).body.heartbeats;
    expect(sweepHealth).toMatchObject({running: true, last_pass_failed: false});
    expect(Date.parse(sweepHealth.next_wake_at)).toBeLessThanOrEqual(pingedAt + 60_000);

    clock.advance(59_999);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("up");
    clock.advance(1);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("late");
    clock.advance(29_999);
    await sweep();
    expect(await statusOf("boiler-2")).toBe("late");
    expect(await pagesOf("boiler-2")).toHaveLength(0);
    clock.advance(1);
    await sweep();
    const down = (await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body;
    expect(down).toMatchObject({status: "down", expected_at: null, down_at: null});
    const pages = await pagesOf("boiler-2");
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({
      id: down.notification_id,
      priority: "critical",
      source: "heartbeat:boiler-2",
      occurrences: 1
    });
    expect(pages[0].message).toContain("boiler-2");

    // Exactly once: more sweeps, later, page nobody again.
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      await sweep();
    }
    expect(await pagesOf("boiler-2")).toHaveLength(1);
    expect((await pagesOf("boiler-2"))[0].occurrences).toBe(1);

    const recovered = await gw.call("GET", pingPath(heartbeat.ping_url), {key: null});
    expect(recovered.status).toBe(200);
    expect(recovered.body.status).toBe("up");
    const resolved = await gw.call("GET", `/api/v1/notifications/${down.notification_id}`);
    expect(resolved.body.status).toBe("resolved");
    expect((await gw.call("GET", "/api/v1/heartbeats/boiler-2")).body.notification_id).toBeNull();

    const audit = await gw.call("GET", "/api/v1/audit?subject_id=boiler-2");
    expect(audit.body.items.map((entry: {action: string}) => entry.action)).toEqual([
      "heartbeat.up",
      "heartbeat.down",
      "heartbeat.late",
      "heartbeat.up",
      "heartbeat.created"
    ]);
    expect(audit.body.items[1]).toMatchObject({
      actor: {type: "system", id: null},
      detail: {from: "late", reason: "missed", notification_id: down.notification_id}
    });
    const accepted = await gw.call("GET", `/api/v1/audit?subject_id=${down.notification_id}`);
    const actions = accepted.body.items.map((entry: {action: string}) => entry.action);
    expect(actions[0]).toBe("notification.resolved");
    expect(actions[actions.length - 1]).toBe("notification.accepted");
    expect(accepted.body.items[actions.length - 1]).toMatchObject({
      actor: {type: "system"},
      source: "heartbeat:boiler-2"
    });
  });

  it("pages at once on /fail, not again on a second failure, and resolves on the next ping", async () => {
    const {ping_url: url} = await createHeartbeat("backup-job");
    expect((await gw.call("POST", pingPath(url), {key: null})).body.status).toBe("up");
    const failed = await gw.call("POST", `${pingPath(url)}/fail`, {key: null});
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe("down");
    expect(await pagesOf("backup-job")).toHaveLength(1);
    expect((await pagesOf("backup-job"))[0].message).toContain("failure");
    await gw.call("GET", `${pingPath(url)}/fail`, {key: null});
    expect(await pagesOf("backup-job")).toHaveLength(1);
    await gw.call("GET", pingPath(url), {key: null});
    expect((await pagesOf("backup-job"))[0].status).toBe("resolved");
    expect(await statusOf("backup-job")).toBe("up");
  });

  it("pages again after its page was resolved by hand: at the next failure, and at the next missed deadline", async () => {
    const {ping_url: url} = await createHeartbeat("line-3-plc");
    await gw.call("POST", pingPath(url), {key: null});
    await gw.call("POST", `${pingPath(url)}/fail`, {key: null, raw: "3"});
    const [first] = await pagesOf("line-3-plc");

    // Resolved by hand: the answer says the heartbeat is still down and what pages next.
    const resolved = await gw.call("POST", `/api/v1/notifications/${first.id}/resolve`);
    expect(resolved.status).toBe(200);
    expect(resolved.body.heartbeat).toEqual({
      name: "line-3-plc",
      status: "down",
      down_at: new Date(clock.now() + 90_000).toISOString(),
      detail: expect.stringMatching(
        /^heartbeat line-3-plc is still down: its next failure or silence past .* pages again$/
      )
    });

    // The next real failure pages anew.
    const failed = await gw.call("POST", `${pingPath(url)}/fail`, {key: null});
    expect(failed.body.status).toBe("down");
    const pages = await pagesOf("line-3-plc");
    expect(pages).toHaveLength(2);
    expect(pages[0]).toMatchObject({status: expect.not.stringMatching(/resolved/)});

    // Resolved by hand again, then silence past the next due time and the grace: a missed ping pages.
    await gw.call("POST", `/api/v1/notifications/${pages[0].id}/resolve`);
    clock.advance(89_000);
    await sweep();
    expect(await pagesOf("line-3-plc")).toHaveLength(2);
    clock.advance(1_000);
    await sweep();
    const afterSilence = await pagesOf("line-3-plc");
    expect(afterSilence).toHaveLength(3);
    expect(afterSilence[0].message).toContain("no ping in time");
    // The last ping as people read it, with the zone named; no raw ISO instant in the message.
    expect(afterSilence[0].message).toMatch(/\(last ping \d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d \S+\)$/);
    expect(afterSilence[0].message).not.toMatch(/\d{4}-\d\d-\d\dT/);

    // A good ping brings it up and resolves the open page; a page resolved by hand is left alone.
    await gw.call("POST", pingPath(url), {key: null});
    expect(await statusOf("line-3-plc")).toBe("up");
    expect((await pagesOf("line-3-plc")).map((page: {status: string}) => page.status)).toEqual([
      "resolved",
      "resolved",
      "resolved"
    ]);
  });

  it("names the failed command's exit code in the page, and never refuses a failure for its body", async () => {
    const {ping_url: url} = await createHeartbeat("db-dump");
    await gw.call("POST", pingPath(url), {key: null});
    const failed = await gw.call("POST", `${pingPath(url)}/fail`, {key: null, body: {exit_code: 3}});
    expect(failed.status).toBe(200);
    expect((await pagesOf("db-dump"))[0].message).toBe("Heartbeat db-dump reported a failure (exit code 3)");
    const audit = await gw.call("GET", "/api/v1/audit?subject_id=db-dump");
    expect(audit.body.items.find((entry: {action: string}) => entry.action === "heartbeat.down").detail).toMatchObject({
      reason: "failed",
      exit_code: 3
    });

    // A body with no plausible code still records the failure, with the plain message.
    const {ping_url: other} = await createHeartbeat("db-vacuum");
    await gw.call("POST", pingPath(other), {key: null});
    const odd = await gw.call("POST", `${pingPath(other)}/fail`, {key: null, body: {exit_code: "segfault"}});
    expect(odd.status).toBe(200);
    expect(odd.body.status).toBe("down");
    expect((await pagesOf("db-vacuum"))[0].message).toBe("Heartbeat db-vacuum reported a failure");
  });

  it("pages when a started run does not finish within the grace time", async () => {
    const {ping_url: url} = await createHeartbeat("nightly-export", {period_seconds: 86_400, grace_seconds: 300});
    await gw.call("GET", pingPath(url), {key: null});
    clock.advance(3_600_000);
    expect((await gw.call("GET", `${pingPath(url)}/start`, {key: null})).status).toBe(200);
    const started = (await gw.call("GET", "/api/v1/heartbeats/nightly-export")).body;
    expect(started).toMatchObject({
      status: "up",
      last_start_at: at(),
      down_at: new Date(clock.now() + 300_000).toISOString()
    });
    clock.advance(299_999);
    await sweep();
    expect(await statusOf("nightly-export")).toBe("up");
    clock.advance(1);
    await sweep();
    expect(await statusOf("nightly-export")).toBe("down");
    expect(await pagesOf("nightly-export")).toHaveLength(1);
  });

  it("answers HEAD, GET and POST on the ping URL; an unknown token is a 404 problem", async () => {
    const {ping_url: url} = await createHeartbeat("edge-probe");
    const head = await fetch(`${gw.url}${pingPath(url)}`, {method: "HEAD"});
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(await statusOf("edge-probe")).toBe("up");
    const post = await gw.call("POST", pingPath(url), {key: null, body: {log: "ok"}});
    expect(post.body).toMatchObject({name: "edge-probe", status: "up"});
    // Whatever a device's tool posts (curl -d, a form) is a ping too, not a 415.
    const plain = await gw.call("POST", pingPath(url), {
      key: null,
      raw: "backup finished in 42 s",
      headers: {"Content-Type": "text/plain"}
    });
    expect(plain.status).toBe(200);
    // The token is a credential: it never reaches the log.
    expect(gw.logLines.join("\n")).not.toContain(pingPath(url).split("/")[2]);
    const unknown = await gw.call("GET", "/ping/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", {key: null});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    expect(JSON.stringify(unknown.body.detail)).not.toContain("AAAA");
  });

  it("pauses (no page however long it is silent) and resumes watching from now", async () => {
    const {ping_url: url} = await createHeartbeat("kiln-3");
    await gw.call("GET", pingPath(url), {key: null});
    const paused = await gw.call("POST", "/api/v1/heartbeats/kiln-3/pause");
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({status: "paused", expected_at: null, down_at: null});
    clock.advance(86_400_000);
    await sweep();
    expect(await statusOf("kiln-3")).toBe("paused");
    expect(await pagesOf("kiln-3")).toHaveLength(0);
    const resumed = await gw.call("POST", "/api/v1/heartbeats/kiln-3/resume");
    expect(resumed.body).toMatchObject({status: "up", expected_at: new Date(clock.now() + 60_000).toISOString()});
    expect((await gw.call("POST", "/api/v1/heartbeats/nothing-here/pause")).status).toBe(404);
  });

  it("never pages for time the gateway was stopped: every heartbeat gets a fresh grace from the restart", async () => {
    await createHeartbeat("conveyor");
    await gw.call("POST", "/api/v1/heartbeats/conveyor/ping");
    await gw.restart();
    // Ten minutes pass while the gateway is down; the heartbeat was due after one.
    clock.advance(600_000);
    await gw.restart();
    const restartedAt = clock.now();
    await sweep();
    expect((await gw.call("GET", "/api/v1/heartbeats/conveyor")).body).toMatchObject({
      status: "late",
      down_at: new Date(restartedAt + 30_000).toISOString()
    });
    expect(await pagesOf("conveyor")).toHaveLength(0);
    clock.advance(29_999);
    await sweep();
    expect(await statusOf("conveyor")).toBe("late");
    clock.advance(1);
    await sweep();
    expect(await statusOf("conveyor")).toBe("down");
    expect(await pagesOf("conveyor")).toHaveLength(1);
  });

  // Last: it leaves this address throttled.
  it("throttles an address that keeps presenting unknown ping tokens, but never a valid one", async () => {
    const {ping_url: url} = await createHeartbeat("last-one");
    clock.advance(3_600_000);
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push((await gw.call("GET", `/ping/guess-${i}-AAAAAAAAAAAAAAAAAAAAAAAA`, {key: null})).status);
    expect(statuses).toEqual([...Array(20).fill(404), 429]);
    const throttled = await gw.call("GET", "/ping/guess-new-AAAAAAAAAAAAAAAAAAAAAAAA", {key: null});
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await gw.call("GET", pingPath(url), {key: null})).status).toBe(200);
  });
});
