import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {startFaultRig, type FaultRig} from "../support/fault-rig.js";

// An alert sent to an escalation policy pages its levels one after another, by mail through a
// real SMTP server and by voice call through the modem simulator on a pty, on a manual clock: each
// level starts exactly when the policy says, an acknowledgement from any channel stops the levels
// still to come, and a level with nobody to reach is passed at once.

let rig: FaultRig;
beforeAll(async () => {
  // The simulator answers each call after 60 ms and the callee presses 1: an acknowledgement by phone.
  rig = await startFaultRig({modem: {dialect: "sim800"}});
});
afterAll(() => rig.stop());

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const mailedTo = () => rig.smtp.messages.map((mail) => mail.envelope.to.join(","));

/** The escalation.level events the journal holds for a notification, as [level, targets' uuids, paged]. */
async function levelEvents(id: string) {
  await rig.gw.gateway.services.runner.idle();
  const bodies = rig.gw.gateway.journal.db
    .prepare("SELECT body FROM events WHERE notification_id = ? AND type = 'escalation.level' ORDER BY sequence")
    .pluck()
    .all(id) as string[];
  return bodies.map((body) => {
    const {level} = JSON.parse(body).data;
    return [level.number, level.targets.map((target: {uuid: string}) => target.uuid), level.paged];
  });
}

async function createPolicy(body: unknown): Promise<string> {
  const answer = await rig.gw.call("POST", "/api/v1/escalation-policies", {body});
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.uuid;
}

describe("paging an escalation policy", () => {
  it("pages a schedule, then the supervisor and a group, each level on time; an ack at level 2 stops level 3", async () => {
    const maria = await rig.recipient("Maria", ["email"]);
    const jonas = await rig.recipient("Jonas", ["email"]);
    const sven = await rig.recipient("Sven", ["email"]);
    const anna = await rig.recipient("Anna", ["email"]);
    const paul = await rig.recipient("Paul", ["email"]);
    const crew = await rig.gw.call("POST", "/api/v1/groups", {body: {name: "Crew B", members: [anna]}});
    // Maria's hour ends 5 minutes from now: level 2 starts after it, so Jonas is on call by then (unused).
    const schedule = await rig.gw.call("POST", "/api/v1/schedules", {
      body: {
        name: "Line 3 on call",
        timezone: "UTC",
        layers: [
          {
            type: "rotation",
            members: [maria, jonas],
            shift_length_hours: 1,
            starts_at: new Date(rig.clock.now() + 5 * MINUTE_MS - HOUR_MS).toISOString()
          }
        ],
        fallback: maria
      }
    });
    expect(schedule.status).toBe(201);
    const policy = await createPolicy({
      name: "Line 3 hydraulics",
      levels: [
        {targets: [schedule.body.uuid], escalate_after_minutes: 10},
        {targets: [sven, crew.body.uuid], escalate_after_minutes: 15},
        {targets: [paul]}
      ]
    });
    const sentBefore = rig.smtp.messages.length;
    const startMs = rig.clock.now();
    const id = await rig.send(policy, "Hydraulic pressure low");

    let n = await rig.notification(id);
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([maria]);
    expect(n.escalation.policy).toMatchObject({uuid: policy, name: "Line 3 hydraulics", level: 1, run: 1, runs: 1});
    expect(n.escalation.policy.next_level_at).toBe(new Date(startMs + 10 * MINUTE_MS).toISOString());
    expect(n.escalation.next_step_at).toBe(n.escalation.policy.next_level_at);

    // Level 2 at exactly 10 minutes: the supervisor and the group's member.
    rig.clock.set(Date.parse(n.escalation.next_step_at));
    await rig.gw.gateway.services.runner.tick();
    n = await rig.notification(id);
    const level2 = n.attempts.slice(1);
    expect(level2.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid).sort()).toEqual(
      [sven, anna].sort()
    );
    for (const attempt of level2) expect(Date.parse(attempt.started_at) - startMs).toBe(10 * MINUTE_MS);
    expect(n.escalation.policy.level).toBe(2);
    expect(n.escalation.policy.next_level_at).toBe(new Date(startMs + 25 * MINUTE_MS).toISOString());
    expect(n.escalation.policy.levels[0].paged).toEqual([
      expect.objectContaining({recipient_uuid: maria, name: "Maria", channel: "email", run: 1})
    ]);
    expect(n.escalation.policy.levels[1].paged.map((page: {name: string}) => page.name).sort()).toEqual([
      "Anna",
      "Sven"
    ]);

    const ack = await rig.gw.call("POST", `/api/v1/notifications/${id}/ack`, {body: {by: "Sven"}});
    expect(ack.status).toBe(200);
    rig.clock.set(startMs + 25 * MINUTE_MS);
    await rig.gw.gateway.services.runner.tick();
    n = await rig.notification(id);
    expect(n.status).toBe("acknowledged");
    expect(n.attempts).toHaveLength(3);
    expect(mailedTo().slice(sentBefore).sort()).toEqual(
      [rig.contacts("Maria").email, rig.contacts("Sven").email, rig.contacts("Anna").email].sort()
    );
    expect(await levelEvents(id)).toEqual([
      [1, [schedule.body.uuid], [maria]],
      [2, [sven, crew.body.uuid], expect.arrayContaining([sven, anna])]
    ]);
  });

  it("stops at level 2 when the supervisor acknowledges on the phone: the modem rings him, his key press acknowledges, level 3 is never paged", async () => {
    const [marta, sigurd, paul] = await Promise.all([
      rig.recipient("Marta", ["email"]),
      rig.recipient("Sigurd", ["voice_call"]),
      rig.recipient("Paul", ["email"])
    ]);
    const policy = await createPolicy({
      name: "Press line",
      levels: [
        {targets: [marta], escalate_after_minutes: 10},
        {targets: [sigurd], escalate_after_minutes: 15},
        {targets: [paul]}
      ]
    });
    const sentBefore = rig.smtp.messages.length;
    const dialledBefore = rig.modem!.count("ATD");
    const id = await rig.send(policy, "Press 4 hydraulic oil over 80 °C");
    let n = await rig.notification(id);
    expect(rig.modem!.count("ATD")).toBe(dialledBefore);

    rig.clock.set(Date.parse(n.escalation.policy.next_level_at));
    await rig.gw.gateway.services.runner.tick();
    await eventually(
      "Sigurd's key press acknowledged the alert",
      () => rig.notification(id),
      (latest) => latest.status === "acknowledged"
    );
    n = await rig.notification(id);
    expect(rig.modem!.received.filter((command) => command.startsWith("ATD"))).toContain(
      `ATD${rig.contacts("Sigurd").phone};`
    );
    expect(n).toMatchObject({
      acknowledged_via: "voice_call",
      acknowledged_by: `Sigurd (${rig.contacts("Sigurd").phone})`
    });
    expect(n.escalation.policy.level).toBe(2);

    rig.clock.set(Date.parse(n.created_at) + 40 * MINUTE_MS);
    await rig.gw.gateway.services.runner.tick();
    expect(mailedTo().slice(sentBefore)).toEqual([rig.contacts("Marta").email]);
    expect((await levelEvents(id)).map(([level]) => level)).toEqual([1, 2]);
  });

  it("a schedule in a later level pages whoever is on call when that level starts, not at acceptance", async () => {
    const [first, second, lead] = await Promise.all(
      ["Ole", "Pia", "Rita"].map((name) => rig.recipient(name, ["email"]))
    );
    // Ole's hour ends 5 minutes from now; level 2 starts after 10.
    const schedule = await rig.gw.call("POST", "/api/v1/schedules", {
      body: {
        name: "Boiler house",
        timezone: "UTC",
        layers: [
          {
            type: "rotation",
            members: [first, second],
            shift_length_hours: 1,
            starts_at: new Date(rig.clock.now() + 5 * MINUTE_MS - HOUR_MS).toISOString()
          }
        ],
        fallback: first
      }
    });
    const policy = await createPolicy({
      name: "Boiler",
      levels: [{targets: [lead], escalate_after_minutes: 10}, {targets: [schedule.body.uuid]}]
    });
    const id = await rig.send(policy, "Boiler pressure high");
    let n = await rig.notification(id);
    rig.clock.set(Date.parse(n.escalation.policy.next_level_at));
    await rig.gw.gateway.services.runner.tick();
    n = await rig.notification(id);
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([lead, second]);
    expect(n.escalation.policy.levels[1].targets).toEqual([
      {uuid: schedule.body.uuid, kind: "schedule", name: "Boiler house", on_call: second}
    ]);
  });

  it("passes a level with nobody to reach at once, and says why it waits once the reachable levels are done", async () => {
    // Telegram is not configured on this box: Tomas's only contact is left out of every plan.
    const tomasAnswer = await rig.gw.call("POST", "/api/v1/recipients", {
      body: {name: "Tomas", telegram_id: "4711", channel_order: ["telegram_voice"]}
    });
    expect(tomasAnswer.status).toBe(201);
    const tomas = tomasAnswer.body.uuid;
    const lena = await rig.recipient("Lena", ["email"]);
    const policy = await createPolicy({
      name: "Night shift",
      levels: [{targets: [tomas], escalate_after_minutes: 5}, {targets: [lena]}]
    });
    const startMs = rig.clock.now();
    const id = await rig.send(policy, "Cooling water flow low");
    let n = await rig.notification(id);
    expect(n.attempts.map((attempt: {recipient_uuid: string}) => attempt.recipient_uuid)).toEqual([lena]);
    expect(Date.parse(n.attempts[0].started_at)).toBe(startMs);
    expect(n.escalation.policy.level).toBe(2);
    expect(n.escalation.waiting_for).toBeNull();
    expect(await levelEvents(id)).toEqual([[2, [lena], [lena]]]);

    // Lena's step is the last reachable one: the alert then waits, loudly, for level 1 rather than ending.
    rig.clock.set(Date.parse(n.escalation.next_step_at));
    await rig.gw.gateway.services.runner.tick();
    n = await rig.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.escalation.waiting_for).toEqual([{channel: null, reason: "level 1 of Night shift has nobody to page"}]);
  });
});

describe("the escalation policies API", () => {
  it("refuses bad policies with a problem naming the field, and changes nothing", async () => {
    const alice = await rig.recipient("Alice", ["email"]);
    const other = await createPolicy({name: "Other", levels: [{targets: [alice]}]});
    const unknown = "0b5e9a34-7a53-4c5e-9a3b-2f4f8d5a1e11";
    const cases: Array<[unknown, number, string]> = [
      [{name: "Empty", levels: []}, 400, "/levels"],
      [{name: "Unknown", levels: [{targets: [unknown]}]}, 422, "/levels/0/targets/0"],
      [{name: "Nested", levels: [{targets: [other]}]}, 422, "/levels/0/targets/0"],
      [{name: "No delay", levels: [{targets: [alice]}, {targets: [alice]}]}, 400, "/levels/0/escalate_after_minutes"]
    ];
    for (const [body, status, pointer] of cases) {
      const answer = await rig.gw.call("POST", "/api/v1/escalation-policies", {body});
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect(answer.body.errors.map((error: {pointer: string}) => error.pointer)).toContain(pointer);
    }
    const itself = await rig.gw.call("PATCH", `/api/v1/escalation-policies/${other}`, {
      body: {levels: [{targets: [other]}]}
    });
    expect(itself.status).toBe(422);
    expect(itself.body.detail).toMatch(/cannot page the policy itself/);
    const listed = await rig.gw.call("GET", "/api/v1/escalation-policies?limit=200");
    expect(listed.body.items.map((item: {name: string}) => item.name)).not.toContain("Unknown");
    expect((await rig.gw.call("GET", `/api/v1/escalation-policies/${other}`)).body.levels).toEqual([
      {targets: [alice], escalate_after_minutes: null}
    ]);
  });

  it("is a heartbeat's target, and a policy or recipient still paged is not deleted: the problem says by what", async () => {
    const bea = await rig.recipient("Bea", ["email"]);
    const policy = await createPolicy({name: "Press 7", levels: [{targets: [bea]}]});
    const heartbeat = await rig.gw.call("POST", "/api/v1/heartbeats", {
      body: {name: "press-7-plc", period_seconds: 60, target: policy}
    });
    expect(heartbeat.status).toBe(201);
    const byName = await rig.gw.call("GET", `/api/v1/targets/${encodeURIComponent("press 7")}`);
    expect(byName.body).toEqual({kind: "policy", uuid: policy, name: "Press 7"});
    const refused = await rig.gw.call("DELETE", `/api/v1/escalation-policies/${policy}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/heartbeat press-7-plc/);
    const recipient = await rig.gw.call("DELETE", `/api/v1/recipients/${bea}`);
    expect(recipient.status).toBe(409);
    expect(recipient.body.detail).toMatch(/escalation policy Press 7/);
    expect((await rig.gw.call("DELETE", `/api/v1/heartbeats/press-7-plc`)).status).toBe(204);
    expect((await rig.gw.call("DELETE", `/api/v1/escalation-policies/${policy}`)).status).toBe(204);
    const audit = await rig.gw.call("GET", "/api/v1/audit?action=escalation_policy.deleted");
    expect(audit.body.items[0]).toMatchObject({subject: {type: "escalation_policy", id: policy}});
  });
});
