import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({smtp: {host: "127.0.0.1", from: "klaxon@factory.lan"}});
});
afterAll(() => gw.stop());

const channel = (recipient: {channels: Array<{channel: string}>}, name: string) =>
  recipient.channels.find((item) => item.channel === name);

describe("recipients", () => {
  it("creates a recipient with defaults, a Location and its channel capabilities", async () => {
    const answer = await gw.call("POST", "/api/v1/recipients", {
      body: {name: "Maria", phone: "+4915112345678", email: "maria@factory.lan", telegram_id: "-100123"}
    });
    expect(answer.status).toBe(201);
    const recipient = answer.body;
    expect(answer.headers.get("location")).toBe(`/api/v1/recipients/${recipient.uuid}`);
    expect(recipient).toMatchObject({
      name: "Maria",
      channel_order: ["telegram_voice", "voice_call", "email"],
      escalation: {ack_timeout_seconds: 120, repeat: 1},
      quiet_hours: null,
      routing_rules: []
    });
    expect(channel(recipient, "email")).toEqual({channel: "email", available: true, reason: null, verified_at: null});
    expect(channel(recipient, "voice_call")).toEqual({
      channel: "voice_call",
      available: false,
      reason: "no modem is configured (modem.port)",
      verified_at: null
    });
    expect(channel(recipient, "sms")).toEqual({
      channel: "sms",
      available: false,
      reason: "not in channel_order",
      verified_at: null
    });
  });

  it("requires at least one contact", async () => {
    const answer = await gw.call("POST", "/api/v1/recipients", {body: {name: "Nobody"}});
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      {pointer: "", detail: "at least one of telegram_id, phone or email is required"}
    ]);
  });

  it.each([
    [{phone: "015112345678"}, "/phone"],
    [{email: "not-an-email"}, "/email"],
    [{telegram_id: "@maria"}, "/telegram_id"],
    [{email: "a@b.lan", channel_order: ["pager"]}, "/channel_order/0"],
    [{email: "a@b.lan", escalation: {ack_timeout_seconds: 5}}, "/escalation/ack_timeout_seconds"],
    [{email: "a@b.lan", escalation: {repeat: 11}}, "/escalation/repeat"],
    [{email: "a@b.lan", quiet_hours: {start: "25:00", end: "06:00", timezone: "Europe/Berlin"}}, "/quiet_hours/start"],
    [
      {email: "a@b.lan", quiet_hours: {start: "22:00", end: "06:00", timezone: "Mars/Olympus"}},
      "/quiet_hours/timezone"
    ],
    [
      {email: "a@b.lan", routing_rules: [{priorities: ["urgent"], channels: ["email"]}]},
      "/routing_rules/0/priorities/0"
    ],
    [{email: "a@b.lan", nickname: "x"}, "/nickname"]
  ])("refuses %j at %s", async (body, pointer) => {
    const before = (await gw.call("GET", "/api/v1/recipients?limit=200")).body.items.length;
    const answer = await gw.call("POST", "/api/v1/recipients", {body});
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((error: {pointer: string}) => error.pointer)).toContain(pointer);
    expect((await gw.call("GET", "/api/v1/recipients?limit=200")).body.items.length).toBe(before);
  });

  it.each([
    ["+999123456789", "does not start with a country calling code (no country uses +999…)"],
    ["+15550000000", "not a valid phone number for any country with calling code +1"],
    ["+491511234567", "not a valid phone number for any country with calling code +49"],
    [
      "015112345678",
      "must be international: a + and the country calling code (e.g. +49 151 12345678); 00 and national numbers are not accepted"
    ],
    ["+49", "is too short to be a phone number"]
  ])("refuses the phone number %s in words", async (phone, detail) => {
    const answer = await gw.call("POST", "/api/v1/recipients", {body: {name: "Typo", phone}});
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(answer.body.errors).toEqual([{pointer: "/phone", detail}]);
  });

  it("reports a phone number without + together with the body's other errors", async () => {
    const answer = await gw.call("POST", "/api/v1/recipients", {
      body: {phone: "0151 2345", escalation: {ack_timeout_seconds: 5}}
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual(
      expect.arrayContaining([
        {
          pointer: "/phone",
          detail:
            "must be international: a + and the country calling code (e.g. +49 151 12345678); 00 and national numbers are not accepted"
        },
        expect.objectContaining({pointer: "/escalation/ack_timeout_seconds"})
      ])
    );
  });

  it("stores a phone number written with spaces, dashes or brackets in E.164", async () => {
    const created = await gw.call("POST", "/api/v1/recipients", {body: {phone: "+49 (151) 1234-5678"}});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({name: "+4915112345678", phone: "+4915112345678"});
    const patched = await gw.call("PATCH", `/api/v1/recipients/${created.body.uuid}`, {
      body: {phone: "+1 201-555-0123"}
    });
    expect(patched.body.phone).toBe("+12015550123");
    const refused = await gw.call("PATCH", `/api/v1/recipients/${created.body.uuid}`, {body: {phone: "+15550000000"}});
    expect(refused.body.errors).toEqual([
      {pointer: "/phone", detail: "not a valid phone number for any country with calling code +1"}
    ]);
    expect((await gw.call("GET", `/api/v1/recipients/${created.body.uuid}`)).body.phone).toBe("+12015550123");
  });

  it("updates with JSON Merge Patch: merges objects, null removes, other fields stay", async () => {
    const uuid = await createRecipient(gw, {name: "Pat"});
    const patch = await gw.call("PATCH", `/api/v1/recipients/${uuid}`, {
      body: {
        escalation: {ack_timeout_seconds: 60},
        quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin"},
        email: null,
        channel_order: ["voice_call", "sms"]
      },
      headers: {"Content-Type": "application/merge-patch+json"}
    });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({
      name: "Pat",
      phone: "+4915112345678",
      email: null,
      escalation: {ack_timeout_seconds: 60, repeat: 1},
      quiet_hours: {start: "22:00", end: "06:00", timezone: "Europe/Berlin", allow_priorities: ["critical"]},
      channel_order: ["voice_call", "sms"]
    });
    expect(patch.body.updated_at >= patch.body.created_at).toBe(true);
    const cleared = await gw.call("PATCH", `/api/v1/recipients/${uuid}`, {body: {quiet_hours: null}});
    expect(cleared.body.quiet_hours).toBeNull();
    expect((await gw.call("GET", `/api/v1/recipients/${uuid}`)).body.escalation.ack_timeout_seconds).toBe(60);
  });

  it("refuses a patch that would leave an invalid recipient, and changes nothing", async () => {
    const uuid = await createRecipient(gw, {name: "Kim"});
    const before = (await gw.call("GET", `/api/v1/recipients/${uuid}`)).body;
    for (const body of [
      {phone: null, email: null},
      {escalation: {ack_timeout_seconds: 1}},
      {uuid: "x"},
      {channels: []}
    ]) {
      const answer = await gw.call("PATCH", `/api/v1/recipients/${uuid}`, {body});
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    expect((await gw.call("PATCH", `/api/v1/recipients/${uuid}`, {body: [1]})).status).toBe(400);
    expect((await gw.call("GET", `/api/v1/recipients/${uuid}`)).body).toEqual(before);
  });

  it("previews the email with its times in the recipient's own zone, named (issue 33)", async () => {
    const quiet_hours = {start: "22:00", end: "06:00", timezone: "America/New_York"};
    const created = await gw.call("POST", "/api/v1/recipients", {
      body: {name: "Preview zone", email: "zone@factory.lan", quiet_hours}
    });
    expect(created.status).toBe(201);
    const preview = await gw.call("POST", `/api/v1/recipients/${created.body.uuid}/preview`);
    expect(preview.status).toBe(200);
    const email = preview.body.channels.find((shown: {channel: string}) => shown.channel === "email");
    expect(email.text).toMatch(/It works until \d+ \w+ \d{4}, \d\d:\d\d:\d\d (EST|EDT|GMT-[45])\./);
  });

  it("answers 404 for an unknown recipient", async () => {
    const unknown = "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b";
    expect((await gw.call("GET", `/api/v1/recipients/${unknown}`)).status).toBe(404);
    expect((await gw.call("PATCH", `/api/v1/recipients/${unknown}`, {body: {name: "x"}})).status).toBe(404);
    expect((await gw.call("DELETE", `/api/v1/recipients/${unknown}`)).status).toBe(404);
  });

  it("pages the list with limit and cursor and bounds the limit", async () => {
    for (let i = 0; i < 3; i++) await createRecipient(gw, {name: `pager ${i}`});
    const all = (await gw.call("GET", "/api/v1/recipients?limit=200")).body.items;
    const first = await gw.call("GET", "/api/v1/recipients?limit=2");
    expect(first.body.items.map((r: {uuid: string}) => r.uuid)).toEqual(
      all.slice(0, 2).map((r: {uuid: string}) => r.uuid)
    );
    const second = await gw.call("GET", `/api/v1/recipients?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((r: {uuid: string}) => r.uuid)).toEqual(
      all.slice(2, 4).map((r: {uuid: string}) => r.uuid)
    );
    expect((await gw.call("GET", "/api/v1/recipients?limit=201")).status).toBe(400);
    expect((await gw.call("GET", "/api/v1/recipients?cursor=nope")).status).toBe(400);
    const last = await gw.call("GET", `/api/v1/recipients?limit=200`);
    expect(last.body.next_cursor).toBeNull();
  });

  it("deletes a recipient unless a group or an open notification still needs it", async () => {
    const uuid = await createRecipient(gw, {name: "Leaving"});
    const group = await gw.call("POST", "/api/v1/groups", {body: {name: "Team", members: [uuid]}});
    const blocked = await gw.call("DELETE", `/api/v1/recipients/${uuid}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toContain(group.body.uuid);
    expect((await gw.call("DELETE", `/api/v1/groups/${group.body.uuid}`)).status).toBe(204);
    const sent = await gw.call("POST", "/api/v1/notifications/send", {
      body: {recipient_uuid: uuid, message: "m", priority: "high"}
    });
    expect((await gw.call("DELETE", `/api/v1/recipients/${uuid}`)).status).toBe(409);
    await gw.call("POST", `/api/v1/notifications/${sent.body.notification_uuid}/ack`);
    expect((await gw.call("DELETE", `/api/v1/recipients/${uuid}`)).status).toBe(204);
    expect((await gw.call("GET", `/api/v1/recipients/${uuid}`)).status).toBe(404);
  });

  it("names the open notifications that block a delete, the oldest 20 of them, for a recipient and a group", async () => {
    const uuid = await createRecipient(gw, {name: "Busy"});
    const group = (await gw.call("POST", "/api/v1/groups", {body: {name: "Busy team", members: [uuid]}})).body
      .uuid as string;
    const sendTo = async (target: string, count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++)
        ids.push(
          (
            await gw.call("POST", "/api/v1/notifications/send", {
              body: {recipient_uuid: target, message: `m${i}`, dedup_key: `k${i}`, priority: "low"}
            })
          ).body.notification_uuid
        );
      return ids;
    };
    const toGroup = await sendTo(group, 2);
    const blockedGroup = await gw.call("DELETE", `/api/v1/groups/${group}`);
    expect(blockedGroup.status).toBe(409);
    expect(blockedGroup.body).toMatchObject({code: "in_use", blocking_notifications: toGroup});
    expect(blockedGroup.body.detail).toContain(`2 open notification(s): ${toGroup.join(", ")};`);

    await Promise.all(toGroup.map((id) => gw.call("POST", `/api/v1/notifications/${id}/resolve`)));
    expect((await gw.call("DELETE", `/api/v1/groups/${group}`)).status).toBe(204);
    const toRecipient = await sendTo(uuid, 22);
    const blocked = await gw.call("DELETE", `/api/v1/recipients/${uuid}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.blocking_notifications).toEqual(toRecipient.slice(0, 20));
    expect(blocked.body.detail).toContain(
      `22 open notification(s): ${toRecipient.slice(0, 20).join(", ")} and 2 more;`
    );
  });
});

describe("groups", () => {
  it("creates, reads, patches and lists groups", async () => {
    const a = await createRecipient(gw, {name: "A"});
    const b = await createRecipient(gw, {name: "B"});
    const created = await gw.call("POST", "/api/v1/groups", {body: {name: "Maintenance", members: [a, b]}});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({name: "Maintenance", members: [a, b], strategy: "sequential"});
    expect(created.headers.get("location")).toBe(`/api/v1/groups/${created.body.uuid}`);
    const patched = await gw.call("PATCH", `/api/v1/groups/${created.body.uuid}`, {
      body: {strategy: "parallel", members: [b, a]}
    });
    expect(patched.body).toMatchObject({strategy: "parallel", members: [b, a], name: "Maintenance"});
    const list = await gw.call("GET", "/api/v1/groups");
    expect(list.body.items.map((g: {uuid: string}) => g.uuid)).toContain(created.body.uuid);
  });

  it("refuses unknown members with 422 and bad fields with 400", async () => {
    const a = await createRecipient(gw, {name: "C"});
    const unknown = await gw.call("POST", "/api/v1/groups", {
      body: {name: "G", members: [a, "0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b"]}
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([
      {pointer: "/members/1", detail: "recipient 0f8c5a2e-8a34-4c1e-9a7b-4c5d1e2f3a4b does not exist"}
    ]);
    expect(
      (await gw.call("POST", "/api/v1/groups", {body: {name: "G", members: [a], strategy: "random"}})).status
    ).toBe(400);
    expect((await gw.call("POST", "/api/v1/groups", {body: {name: "G", members: []}})).status).toBe(400);
  });
});
