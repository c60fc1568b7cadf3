import {afterEach, describe, expect, it} from "vitest";
import {makeRig, stopRig, T0, type Rig} from "../support/runner-rig.js";
import {startWebhookReceiver, type WebhookReceiver} from "../support/webhook-receiver.js";

// The journal's write contract (docs/architecture.md, "The journal"): a write function may run
// twice, so it touches only the database and leaves its effects on memory to `afterCommit`.
// Every path that writes runs here once normally and once with every batch replayed (its first
// run rolled back, as a sibling write failing after changing rows causes); the world must see
// the same either way: answers, calls, webhook deliveries, journal rows and log lines.

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await stopRig();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

/**
 * Everything random (ids, uuids, API key ids, secrets, tokens, hashes, ports) replaced by its
 * order of first appearance, so two runs compare.
 */
function normalised(trace: unknown, keyIds: string[]): unknown {
  const names = new Map<string, string>();
  const patterns = [
    "\\b[a-z]+_[0-9A-HJKMNP-TV-Z]{26}\\b",
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "\\b(?:klx|whsec)_[A-Za-z0-9+/_=-]+",
    "token=[A-Za-z0-9_-]+",
    "/ping/[A-Za-z0-9_-]{32}",
    "\\b[0-9a-f]{64}\\b",
    // The journal's identity (journal_identity.id), random for each journal.
    "\\b[0-9a-f]{32}\\b",
    "127\\.0\\.0\\.1:\\d+",
    ...keyIds.map((id) => `\\b${id}\\b`)
  ];
  const text = JSON.stringify(trace).replace(new RegExp(patterns.join("|"), "g"), (value) => {
    if (!names.has(value)) names.set(value, `<${names.size}>`);
    return names.get(value) as string;
  });
  return JSON.parse(text);
}

// The webhook dispatcher runs on its own timer during the walk: when it got to a row is not the walk's doing.
const UNSCRIPTED_COLUMNS: Record<string, string[]> = {webhook_deliveries: ["started_at", "finished_at", "duration_ms"]};

/** Every journal row, in insertion order. */
function journalRows(r: Rig): Record<string, unknown[]> {
  const {db} = r.gw.gateway.journal;
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[];
  const scripted = (table: string, row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).filter(([column]) => !UNSCRIPTED_COLUMNS[table]?.includes(column)));
  return Object.fromEntries(
    tables.map((table) => [
      table,
      (db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Array<Record<string, unknown>>).map((row) =>
        scripted(table, row)
      )
    ])
  );
}

/** What the gateway said in its log, less the request lines (they carry measured times). */
function logMessages(r: Rig): string[] {
  return r.gw.logLines
    .map((line) => JSON.parse(line) as {level: string; msg: string})
    .filter((line) => !/^request|^http/.test(line.msg))
    .map((line) => `${line.level} ${line.msg}`);
}

/** Drives every write path through the API, the runner, the heartbeat sweep and the webhook dispatcher; returns what the world saw. */
async function walk(replayEveryBatch: boolean) {
  const r = await makeRig();
  const receiver = await startWebhookReceiver(r.clock);
  receivers.push(receiver);
  const {journal} = r.gw.gateway;
  journal.replayEveryBatch = replayEveryBatch;
  const statsBefore = {...journal.stats};
  const answers: unknown[] = [];
  const call = async (method: string, path: string, options: Parameters<Rig["gw"]["call"]>[2] = {}) => {
    const answer = await r.gw.call(method, path, options);
    answers.push([method, path, answer.status, answer.body, answer.headers.get("idempotent-replayed")]);
    return answer;
  };
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call("POST", "/api/v1/notifications/send", {body: {priority: "high", ...body}, headers});

  // Admin edits: config store plus audit entries in the journal.
  const maria = await r.recipient({name: "Maria", phone: "+4915112345678", email: "maria@factory.lan"});
  const bob = await r.recipient({name: "Bob", phone: "+4915112345679", email: "bob@factory.lan"});
  const tom = await r.recipient({name: "Tom", telegram_id: "4242", channel_order: ["telegram_voice"]});
  await call("PATCH", `/api/v1/recipients/${bob}`, {body: {name: "Bob B."}});
  await call("POST", "/api/v1/groups", {body: {name: "Boiler team", members: [maria, bob], strategy: "sequential"}});
  await call("POST", "/api/v1/keys", {body: {name: "plc", scopes: ["notifications:send"]}});
  await call("POST", "/api/v1/webhooks", {body: {url: receiver.url, events: ["*"]}});

  // Sends: created, idempotent and replayed, deduplicated, merged and raised, and one that cannot reach anyone.
  const first = (await send({recipient_uuid: maria, message: "press 7 oil temperature high"})).body.notification_uuid;
  const keyed = {recipient_uuid: maria, message: "press 8 oil temperature high"};
  await send(keyed, {"Idempotency-Key": "press-8", Prefer: "return=representation"});
  await send(keyed, {"Idempotency-Key": "press-8", Prefer: "return=representation"});
  await send({recipient_uuid: bob, message: "line 3 slow", priority: "low", dedup_key: "line-3"});
  await send({recipient_uuid: bob, message: "line 3 slow", priority: "low", dedup_key: "line-3"});
  const raised = (
    await send({recipient_uuid: bob, message: "line 3 stopped", priority: "critical", dedup_key: "line-3"})
  ).body.notification_uuid;
  r.telegram.unavailable = "Telegram unreachable";
  const waiting = (await send({recipient_uuid: tom, message: "furnace door open"})).body.notification_uuid;

  // Escalation: the first pass pages Maria once for both alerts (a storm) and Bob; a newcomer
  // then joins Maria's chain; her call is not answered, so the step is tried again early.
  r.voice.script({kind: "result", result: {outcome: "no_answer", detail: "rang out"}});
  await r.tick();
  await send({recipient_uuid: maria, message: "press 9 oil temperature high"});
  r.clock.set(T0 + 60_000);
  await r.tick();
  r.telegram.repair();
  await r.runner().checkChannels();
  await r.tick();
  // Acknowledged by the person through a channel, by API, resolved by API.
  r.email.script({kind: "acknowledge", by: "maria", result: {outcome: "delivered", detail: "read"}});
  r.clock.set(T0 + 180_000);
  await r.tick();
  await call("POST", `/api/v1/notifications/${first}/ack`, {body: {by: "maria", note: "on it"}});
  await call("POST", `/api/v1/notifications/${raised}/resolve`);
  await call("POST", `/api/v1/notifications/${waiting}/ack`, {body: {by: "tom"}});

  // Heartbeats: created, pinged, swept down (a page), pinged up (the page resolved).
  await call("POST", "/api/v1/heartbeats", {
    body: {name: "press-7", period_seconds: 60, grace_seconds: 30, target: bob}
  });
  await call("POST", "/api/v1/heartbeats/press-7/ping");
  r.clock.set(T0 + 400_000);
  await r.gw.gateway.heartbeats.monitor.tick();
  await call("POST", "/api/v1/heartbeats/press-7/ping");

  // Integrations: fired, fired again (merged), resolved, and a heartbeat created by an event.
  const integration = (
    await call("POST", "/api/v1/integrations", {body: {name: "go-services", kind: "generic", target: maria}})
  ).body;
  const event = (body: Record<string, unknown>) =>
    call("POST", `/api/v1/integrations/${integration.id}/events`, {body});
  await event({
    alert_id: "db1-disk",
    action: "fire",
    title: "Disk full",
    message: "db1 /var at 97%",
    severity: "error"
  });
  await event({
    alert_id: "db1-disk",
    action: "fire",
    title: "Disk full",
    message: "db1 /var at 98%",
    severity: "error"
  });
  await event({alert_id: "db1-disk", action: "resolve"});
  await event({alert_id: "backup-job", action: "heartbeat", period_seconds: 3600});

  // Maintenance: a window holds the integration's next alert; ending it early releases the alert, which pages.
  const window = await call("POST", "/api/v1/maintenance", {
    body: {
      ends_at: new Date(r.clock.now() + 3_600_000).toISOString(),
      reason: "disk swap",
      integrations: [integration.id]
    }
  });
  await event({alert_id: "db2-disk", action: "fire", title: "Disk full", severity: "error"});
  await call("POST", `/api/v1/maintenance/${window.body.uuid}/end`);
  await r.tick();

  // Webhooks: every queued event delivered once. The dispatcher's own timer may have a pass in flight that
  // holds rows in `sending`; a tick of ours then claims nothing and returns at once, so wait on the outbox
  // itself: a row leaves it only after the receiver answered, so the receiver then holds every event.
  const pending = journal.db.prepare("SELECT COUNT(*) FROM outbox WHERE status IN ('pending', 'sending')").pluck();
  await expect
    .poll(
      async () => {
        await r.gw.gateway.webhooks.dispatcher.tick();
        return pending.get();
      },
      {timeout: 30_000, interval: 20}
    )
    .toBe(0);
  await r.runner().idle();

  const deliveries = Object.fromEntries(
    (["voice", "email", "telegram", "sms"] as const).map((name) => [
      name,
      r[name].deliveries.map((delivery) => [delivery.contact, delivery.alerts.map((alert) => alert.notification_id)])
    ])
  );
  const keyIds = ((await r.gw.call("GET", "/api/v1/keys")).body.items as Array<{id: string}>).map((key) => key.id);
  const webhookEvents = receiver.received
    .map((delivery) => JSON.parse(delivery.body) as {id: string; type: string})
    .map((body) => `${body.type} ${body.id}`)
    .sort();
  return {
    trace: normalised(
      {answers, deliveries, webhookEvents, journal: journalRows(r), log: logMessages(r)},
      keyIds
    ) as any,
    commits: journal.stats.commits - statsBefore.commits,
    replays: journal.stats.replays - statsBefore.replays
  };
}

describe("write functions replayed by group commit", () => {
  it("change nothing the world sees when every batch runs twice", async () => {
    const normal = await walk(false);
    await stopRig();
    const replayed = await walk(true);
    expect(normal.replays).toBe(0);
    expect(replayed.replays).toBe(replayed.commits);
    expect(replayed.commits).toBeGreaterThan(40);
    // The walk went where it meant to: one call for the storm, a retry, a wait, webhook deliveries.
    expect(normal.trace.deliveries.voice.length).toBeGreaterThanOrEqual(3);
    expect(normal.trace.deliveries.telegram).toHaveLength(1);
    expect(normal.trace.webhookEvents.length).toBeGreaterThan(20);
    expect(normal.trace.log).toContain("warn an alert cannot reach anyone: it waits for a channel");
    expect(normal.trace.answers.filter((answer: unknown[]) => answer[4] === "true")).toHaveLength(1);
    expect(normal.trace.journal.suppressions).toHaveLength(1);
    expect(normal.trace.journal.maintenance_windows[0].released_at).not.toBeNull();
    expect(replayed.trace).toEqual(normal.trace);
  });
});
