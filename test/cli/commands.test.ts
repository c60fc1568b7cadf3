import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ensureKlaxonAdmin, runKlaxonAdmin} from "./support/klaxon-admin.js";

let gw: TestGateway;
let alice: string;
let env: Record<string, string>;

beforeAll(async () => {
  await ensureKlaxonAdmin();
  gw = await startTestGateway();
  alice = await createRecipient(gw);
  env = {KLAXON_URL: gw.url, KLAXON_API_KEY: gw.adminKey};
}, 120_000);
afterAll(() => gw.stop());

const klaxonAdmin = (args: string[], extraEnv: Record<string, string> = {}, stdin?: string) =>
  runKlaxonAdmin(args, {...env, ...extraEnv}, stdin);
const json = async (args: string[]) => {
  const run = await klaxonAdmin([...args, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
};

describe("the klaxon-admin bundle", () => {
  it("runs with the given Node alone: nothing on PATH, no node_modules near, outside the repository", async () => {
    const run = await runKlaxonAdmin(["--version"]);
    expect(run).toMatchObject({code: 0, stderr: ""});
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("prints help for every command it lists", async () => {
    const overview = await runKlaxonAdmin(["--help"]);
    expect(overview.code).toBe(0);
    const commands = [...overview.stdout.matchAll(/^ {2}([a-z]+(?: [a-z]+)?) {2,}\S/gm)].map((match) => match[1]);
    expect(commands).toEqual(
      expect.arrayContaining([
        "send",
        "get",
        "list",
        "ack",
        "resolve",
        "recipients list",
        "recipients create",
        "recipients update",
        "groups create",
        "keys create",
        "keys list",
        "keys revoke",
        "heartbeat ping",
        "doctor",
        "backup"
      ])
    );
    for (const command of commands) {
      const help = await runKlaxonAdmin([...command.split(" "), "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.stdout).toContain(`usage: klaxon-admin ${command}`);
    }
  });

  it("exits 2 with a hint for an unknown command, flag or missing argument", async () => {
    for (const args of [
      ["frobnicate"],
      ["send", "--to", alice, "--priority", "high", "--colour", "red", "hi"],
      ["get"],
      ["recipients", "explode"]
    ]) {
      const run = await klaxonAdmin(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain("error:");
    }
  });
});

describe("notifications", () => {
  it("sends an alert and shows it in human form", async () => {
    const run = await klaxonAdmin([
      "send",
      "--to",
      alice,
      "--priority",
      "critical",
      "--source",
      "plc-7",
      "--service",
      "press",
      "Press 7 hydraulic oil over 80 °C"
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^notification\s+notif_[0-9A-Z]{20,}$/m);
    expect(run.stdout).toMatch(/^status\s+queued$/m);
    const id = /notif_[0-9A-Z]+/.exec(run.stdout)![0];
    const stored = await gw.call("GET", `/api/v1/notifications/${id}`);
    expect(stored.body).toMatchObject({
      message: "Press 7 hydraulic oil over 80 °C",
      priority: "critical",
      source: "plc-7",
      service: "press"
    });

    const shown = await klaxonAdmin(["get", id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${id}$`, "m"));
    expect(shown.stdout).toMatch(/^message\s+Press 7 hydraulic oil over 80 °C$/m);
    expect(shown.stdout).toMatch(/^source\s+plc-7$/m);
    // People read times in a zone that is named, not ISO 8601 in UTC (issue 33); --json keeps ISO.
    expect(shown.stdout).toMatch(/^created\s+\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d \S+$/m);
    expect(shown.stdout).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    // Nothing can page on this gateway: the long form says why, in the gateway's words.
    expect(shown.stdout).toMatch(/^escalation\s+.*; waiting: .*(not configured|no channel)/m);
  });

  it("prints the API's JSON with --json, for the short form and the long form", async () => {
    const sent = await json([
      "send",
      "--to",
      alice,
      "--priority",
      "high",
      "--dedup-key",
      "json-1",
      "--link",
      "https://grafana.lan/d/1",
      "compressor",
      "2",
      "tripped"
    ]);
    expect(Object.keys(sent).sort()).toEqual([
      "channels_planned",
      "escalation_chain_id",
      "notification_uuid",
      "status"
    ]);
    const long = await json(["get", sent.notification_uuid]);
    expect(long).toEqual((await gw.call("GET", `/api/v1/notifications/${sent.notification_uuid}`)).body);
    expect(long).toMatchObject({message: "compressor 2 tripped", dedup_key: "json-1", link: "https://grafana.lan/d/1"});
  });

  it("reads the message from stdin when it is -", async () => {
    const run = await klaxonAdmin(
      ["send", "--to", alice, "--priority", "low", "--json", "-"],
      {},
      "disk 91% full on nas-1\n"
    );
    expect(run.code, run.stderr).toBe(0);
    const id = JSON.parse(run.stdout).notification_uuid;
    expect((await gw.call("GET", `/api/v1/notifications/${id}`)).body.message).toBe("disk 91% full on nas-1");
  });

  it("replays a send repeated with the same --idempotency-key instead of paging twice", async () => {
    const args = [
      "send",
      "--to",
      alice,
      "--priority",
      "critical",
      "--idempotency-key",
      "cron-backup-2026-11-22",
      "nightly backup failed"
    ];
    const first = await klaxonAdmin(args);
    const again = await klaxonAdmin(args);
    expect(first.code).toBe(0);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("replayed");
    expect(/notif_[0-9A-Z]+/.exec(again.stdout)![0]).toBe(/notif_[0-9A-Z]+/.exec(first.stdout)![0]);
  });

  it("lists notifications with filters and pages", async () => {
    const sent = await json(["send", "--to", alice, "--priority", "info", "list me"]);
    const page = await json(["list", "--priority", "info", "--limit", "1"]);
    expect(page.items.map((n: {id: string}) => n.id)).toEqual([sent.notification_uuid]);
    expect(page.next_cursor === null || typeof page.next_cursor === "string").toBe(true);

    const human = await klaxonAdmin(["list", "--limit", "2"]);
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")[0]).toMatch(/^ID\s+STATUS\s+PRIORITY\s+CREATED\s+MESSAGE$/);
    expect(human.stdout).toMatch(/^more: klaxon-admin list --cursor \S+$/m);

    const all = await json(["list", "--all", "--limit", "1"]);
    const total = (await gw.call("GET", "/api/v1/notifications?limit=200")).body.items.length;
    expect(all.items).toHaveLength(total);
    expect(all.next_cursor).toBeNull();
  });

  it("sends to a schedule, group or recipient by name, and refuses a name two targets share, listing both", async () => {
    const rotation = {type: "rotation", members: [alice], starts_at: "2026-01-05T06:00:00Z", shift_length_hours: 12};
    const schedule = await gw.call("POST", "/api/v1/schedules", {
      body: {name: "Maintenance on-call", timezone: "Europe/Berlin", layers: [rotation], fallback: alice}
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    const sent = await json(["send", "--to", "maintenance ON-CALL", "--priority", "high", "belt 4 stopped"]);
    expect((await gw.call("GET", `/api/v1/notifications/${sent.notification_uuid}`)).body.recipient_uuid).toBe(
      schedule.body.uuid
    );
    const group = await gw.call("POST", "/api/v1/groups", {body: {name: "Maintenance on-call", members: [alice]}});
    expect(group.status).toBe(201);
    const ambiguous = await klaxonAdmin(["send", "--to", "Maintenance on-call", "--priority", "high", "belt 4"]);
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.stderr).toContain(`schedule "Maintenance on-call" (${schedule.body.uuid})`);
    expect(ambiguous.stderr).toContain(`group "Maintenance on-call" (${group.body.uuid})`);
    const unknown = await klaxonAdmin(["send", "--to", "Nobody here", "--priority", "high", "belt 4"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no recipient, group, schedule or policy has the uuid or name "Nobody here"/);
  });

  it("covers schedules, maintenance windows, heartbeats and integrations as the device CLI does", async () => {
    const rotation = {type: "rotation", members: [alice], starts_at: "2026-01-05T06:00:00Z", shift_length_hours: 12};
    const schedule = await gw.call("POST", "/api/v1/schedules", {
      body: {name: "Boiler house", timezone: "Europe/Berlin", layers: [rotation], fallback: alice}
    });
    expect(schedule.status).toBe(201);
    const oncall = await klaxonAdmin(["oncall", "Boiler house"]);
    expect(oncall.code, oncall.stderr).toBe(0);
    expect(oncall.stdout).toMatch(/^on call\s+Alice$/m);
    expect(oncall.stdout).toMatch(/^paged\s+Alice \(recipient\)$/m);
    // The shift in the schedule's zone, named (issue 33); --json keeps the ISO instants.
    expect(oncall.stdout).toMatch(/^from\s+\d+ \w+ \d{4}, \d\d:00:00 CES?T$/m);
    expect(oncall.stdout).toMatch(/^until\s+\d+ \w+ \d{4}, \d\d:00:00 CES?T$/m);
    expect((await json(["oncall", "Boiler house"])).shift.starts_at).toMatch(/^\d{4}-\d\d-\d\dT(06|18):00:00\.000Z$/);
    expect((await klaxonAdmin(["schedules", "list"])).stdout).toMatch(
      new RegExp(`^${schedule.body.uuid}\\s+Boiler house\\s+Europe/Berlin`, "m")
    );

    const window = await json([
      "maintenance",
      "start",
      "--reason",
      "boiler service",
      "--for",
      "1h30m",
      "--target",
      "Boiler house"
    ]);
    expect(window).toMatchObject({status: "active", reason: "boiler service", targets: [schedule.body.uuid]});
    expect(Date.parse(window.ends_at) - Date.parse(window.starts_at)).toBeGreaterThanOrEqual(90 * 60_000 - 2000);
    expect((await klaxonAdmin(["maintenance", "list", "--status", "active"])).stdout).toContain(window.uuid);
    expect(await json(["maintenance", "end", window.uuid])).toMatchObject({uuid: window.uuid, status: "ended"});
    expect((await klaxonAdmin(["maintenance", "start", "--reason", "x", "--for", "soon"])).code).toBe(2);

    const heartbeat = await gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "boiler-plc", period_seconds: 60, target: alice}
    });
    expect(heartbeat.status).toBe(201);
    expect((await klaxonAdmin(["heartbeats", "list"])).stdout).toMatch(/^boiler-plc\s+\S+\s+60\s/m);
    const integration = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "boiler-scada", kind: "generic", target: alice}
    });
    expect(integration.status).toBe(201);
    expect((await klaxonAdmin(["integrations", "list"])).stdout).toMatch(
      new RegExp(`^${integration.body.id}\\s+boiler-scada\\s+generic\\s+\\S+\\s+-$`, "m")
    );
    // A PLC's device link: nothing listens on port 1, so it is unreachable.
    const plc = await gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "press-7",
        kind: "modbus",
        target: alice,
        modbus: {host: "127.0.0.1", port: 1},
        points: [{name: "oil_temp", table: "holding_register", address: 100, type: "uint16"}]
      }
    });
    expect(plc.status).toBe(201);
    await expect
      .poll(async () => (await klaxonAdmin(["integrations", "list"])).stdout)
      .toMatch(new RegExp(`^${plc.body.id}\\s+press-7\\s+modbus\\s+\\S+\\s+unreachable$`, "m"));
    // Gone before it would page its target for being unreachable, which later tests would see.
    expect((await gw.call("DELETE", `/api/v1/integrations/${plc.body.id}`)).status).toBe(204);
  });

  it("acknowledges with who and a note, then resolves", async () => {
    const sent = await json(["send", "--to", alice, "--priority", "high", "ack me"]);
    const acked = await klaxonAdmin(["ack", sent.notification_uuid, "--by", "maria", "--note", "valve closed"]);
    expect(acked.code, acked.stderr).toBe(0);
    expect(acked.stdout).toContain(`acknowledged ${sent.notification_uuid}`);
    expect((await gw.call("GET", `/api/v1/notifications/${sent.notification_uuid}`)).body).toMatchObject({
      status: "acknowledged",
      acknowledged_by: "maria",
      acknowledged_note: "valve closed",
      acknowledged_via: "api"
    });

    const resolved = await json(["resolve", sent.notification_uuid]);
    expect(resolved).toMatchObject({id: sent.notification_uuid, status: "resolved"});
    expect(await json(["list", "--status", "resolved"])).toMatchObject({
      items: expect.arrayContaining([expect.objectContaining({id: sent.notification_uuid})])
    });
  });

  it("maps refusals to the documented exit codes", async () => {
    const sent = await json(["send", "--to", alice, "--priority", "high", "resolve then ack"]);
    await json(["resolve", sent.notification_uuid]);
    const conflict = await klaxonAdmin(["ack", sent.notification_uuid]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("409");

    const missing = await klaxonAdmin(["get", "notif_00000000000000000000000000"]);
    expect(missing.code).toBe(3);
    const unknownTarget = await klaxonAdmin([
      "send",
      "--to",
      "00000000-0000-4000-8000-000000000000",
      "--priority",
      "high",
      "nobody"
    ]);
    expect(unknownTarget.code).toBe(2);
    expect(unknownTarget.stderr).toContain("/recipient_uuid");
    const badPriority = await klaxonAdmin(["send", "--to", alice, "--priority", "urgent", "x"]);
    expect(badPriority.code).toBe(2);
    const noKey = await runKlaxonAdmin(["list"], {KLAXON_URL: gw.url});
    expect(noKey.code).toBe(4);
    const wrongKey = await klaxonAdmin(["list"], {KLAXON_API_KEY: "klx_abcdefgh_0123456789abcdef0123456789abcdef"});
    expect(wrongKey.code).toBe(4);
    expect(wrongKey.stderr).not.toContain("0123456789abcdef0123456789abcdef");
  });

  it("prints the problem as JSON on stdout with --json when the gateway refuses", async () => {
    const run = await klaxonAdmin(["get", "notif_00000000000000000000000000", "--json"]);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({status: 404, code: "not_found", title: expect.any(String)});
  });
});

describe("recipients and groups", () => {
  it("creates, shows, updates, lists and deletes a recipient", async () => {
    const created = await klaxonAdmin([
      "recipients",
      "create",
      "--name",
      "Bob",
      "--phone",
      "+4915199999999",
      "--email",
      "bob@factory.lan",
      "--channel-order",
      "email,voice_call",
      "--ack-timeout",
      "60",
      "--repeat",
      "2"
    ]);
    expect(created.code, created.stderr).toBe(0);
    const uuid = /created recipient (\S+)/.exec(created.stdout)![1];
    expect(created.stdout).toMatch(/^channel order\s+email, voice_call$/m);
    expect(created.stdout).toMatch(/^escalation\s+ack timeout 60 s, repeat 2$/m);

    const quiet = {quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin"}};
    const updated = await json(["recipients", "update", uuid, "--name", "Bob B.", "--data", JSON.stringify(quiet)]);
    expect(updated).toMatchObject({
      uuid,
      name: "Bob B.",
      phone: "+4915199999999",
      quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin"}
    });
    const cleared = await json(["recipients", "update", uuid, "--data", '{"quiet_hours": null}']);
    expect(cleared.quiet_hours).toBeNull();

    expect(await json(["recipients", "get", uuid])).toEqual((await gw.call("GET", `/api/v1/recipients/${uuid}`)).body);
    const listed = await klaxonAdmin(["recipients", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`^${uuid}\\s+Bob B\\.\\s+\\+4915199999999`, "m"));
    const all = await json(["recipients", "list", "--all", "--limit", "1"]);
    expect(all.items.map((r: {uuid: string}) => r.uuid)).toEqual(expect.arrayContaining([alice, uuid]));

    expect((await klaxonAdmin(["recipients", "delete", uuid])).code).toBe(0);
    expect((await klaxonAdmin(["recipients", "get", uuid])).code).toBe(3);
  });

  it("refuses a recipient without contacts locally and an invalid phone at the gateway, both with exit 2", async () => {
    const none = await klaxonAdmin(["recipients", "create", "--name", "Nobody"]);
    expect(none.code).toBe(2);
    const invalid = await klaxonAdmin(["recipients", "create", "--phone", "0151 123"]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("/phone");
  });

  it("creates, updates, lists and deletes a group, and sends to it", async () => {
    const bob = await createRecipient(gw, {name: "Bob", email: "bob2@factory.lan"});
    const group = await json([
      "groups",
      "create",
      "--name",
      "night shift",
      "--member",
      alice,
      "--member",
      bob,
      "--strategy",
      "parallel"
    ]);
    expect(group).toMatchObject({name: "night shift", members: [alice, bob], strategy: "parallel"});
    const updated = await klaxonAdmin([
      "groups",
      "update",
      group.uuid,
      "--member",
      `${bob},${alice}`,
      "--strategy",
      "sequential"
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(new RegExp(`^members\\s+${bob}, ${alice}$`, "m"));
    expect((await json(["groups", "list"])).items.map((g: {uuid: string}) => g.uuid)).toContain(group.uuid);
    expect((await klaxonAdmin(["groups", "get", group.uuid])).stdout).toMatch(/^strategy\s+sequential$/m);

    const sent = await json(["send", "--to", group.uuid, "--priority", "high", "line 3 stopped"]);
    expect((await gw.call("GET", `/api/v1/notifications/${sent.notification_uuid}`)).body.recipient_uuid).toBe(
      group.uuid
    );
    await json(["resolve", sent.notification_uuid]);
    expect((await klaxonAdmin(["groups", "delete", group.uuid])).code).toBe(0);
    expect((await klaxonAdmin(["groups", "get", group.uuid])).code).toBe(3);
  });
});

describe("keys", () => {
  it("creates a key shown once, lists keys without secrets, and revokes one", async () => {
    const created = await json([
      "keys",
      "create",
      "--name",
      "plc-gateway",
      "--scope",
      "notifications:send,notifications:read",
      "--owner",
      "Maria"
    ]);
    expect(created.key).toMatch(/^klx_/);
    expect(created.scopes).toEqual(["notifications:send", "notifications:read"]);
    expect(created.owner).toBe("Maria");

    const sent = await klaxonAdmin(["send", "--to", alice, "--priority", "high", "from the plc"], {
      KLAXON_API_KEY: created.key
    });
    expect(sent.code, sent.stderr).toBe(0);
    const forbidden = await klaxonAdmin(["recipients", "list"], {KLAXON_API_KEY: created.key});
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toContain("403");

    const listed = await klaxonAdmin(["keys", "list"]);
    expect(listed.stdout).toMatch(
      new RegExp(`^${created.id}\\s+plc-gateway\\s+notifications:send,notifications:read.*\\sMaria$`, "m")
    );
    expect(listed.stdout).not.toContain(created.key);
    expect(listed.stdout).not.toContain(gw.adminKey);

    expect((await klaxonAdmin(["keys", "revoke", created.id])).code).toBe(0);
    const revoked = await klaxonAdmin(["list"], {KLAXON_API_KEY: created.key});
    expect(revoked.code).toBe(4);
    expect(revoked.stdout + revoked.stderr).not.toContain(created.key);
  });

  it("takes the key from --api-key as well as from the environment", async () => {
    const run = await runKlaxonAdmin(["recipients", "list", "--json", "--api-key", gw.adminKey, "--url", gw.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).items.length).toBeGreaterThan(0);
  });
});

describe("heartbeats", () => {
  it("pings a heartbeat and reports its state", async () => {
    const created = await gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "nightly-backup", period_seconds: 86400, grace_seconds: 3600, target: alice}
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await klaxonAdmin(["heartbeat", "ping", "nightly-backup"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^pinged nightly-backup: up, next ping expected by \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d \S+$/m
    );
    expect((await gw.call("GET", "/api/v1/heartbeats/nightly-backup")).body.status).toBe("up");
    expect(await json(["heartbeat", "ping", "nightly-backup"])).toMatchObject({name: "nightly-backup", status: "up"});
    expect((await klaxonAdmin(["heartbeat", "ping", "no-such-job"])).code).toBe(3);
  });
});

describe("escalation policies", () => {
  it("creates a policy with levels named by target name or uuid, and lists it", async () => {
    const lead = await gw.call("POST", "/api/v1/recipients", {
      body: {name: "Shift lead Ute", email: "ute@factory.lan"}
    });
    expect(lead.status).toBe(201);
    const created = await json([
      "policies",
      "create",
      "--name",
      "Compressor hall",
      "--level",
      `${alice}@10`,
      "--level",
      "shift lead ute",
      "--repeat",
      "1"
    ]);
    expect(created).toMatchObject({
      name: "Compressor hall",
      repeat: 1,
      levels: [
        {targets: [alice], escalate_after_minutes: 10},
        {targets: [lead.body.uuid], escalate_after_minutes: null}
      ]
    });
    const listed = await klaxonAdmin(["policies", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${created.uuid}\\s+Compressor hall\\s+2\\s+1$`, "m"));
    const sent = await json(["send", "--to", "compressor hall", "--priority", "high", "Compressor 2 tripped"]);
    const alert = await gw.call("GET", `/api/v1/notifications/${sent.notification_uuid}`);
    expect(alert.body.escalation.policy.uuid).toBe(created.uuid);
  });
});
