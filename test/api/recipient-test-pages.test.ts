import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {shareEmailRig} from "../channels/email-rig.js";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  journalCounts,
  startTestGateway,
  type TestGateway
} from "../support/gateway.js";
import {RecordingDriver} from "../support/recording-driver.js";

interface ChannelEntry {
  channel: string;
  available: boolean;
  verified_at: string | null;
}
const channelOf = (view: {channels: ChannelEntry[]}, channel: string) =>
  view.channels.find((entry) => entry.channel === channel)!;

// Two gateways, one after the other (Ts.ED serves one per process), each shared by its block's tests:
// every test has its own recipients and addresses, so the per-contact limit of one test keeps them
// apart, and counts the mail and deliveries from where it started.
describe("POST /api/v1/recipients/{uuid}/test, through a real SMTP server", () => {
  const shared = shareEmailRig();

  it("mails a marked test to the recipient, verifies the address, and pages nobody else", async () => {
    const rig = shared();
    const mailed = rig.peer.messages.length;
    const maria = await rig.recipient({phone: "+4915112345678"});
    expect(channelOf((await rig.gw.call("GET", `/api/v1/recipients/${maria}`)).body, "email").verified_at).toBeNull();
    const before = await journalCounts(rig.gw);

    const answer = await rig.gw.call("POST", `/api/v1/recipients/${maria}/test`, {body: {channel: "email"}});

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      recipient_uuid: maria,
      results: [
        {
          channel: "email",
          contact: "m****@factory.lan",
          outcome: "delivered",
          detail: expect.stringContaining("accepted by the SMTP server"),
          verified_at: expect.any(String)
        }
      ]
    });
    const mail = await rig.peer.next();
    expect(mail.envelope.to).toEqual(["maria@factory.lan"]);
    expect(mail.subject).toContain("[TEST]");
    expect(mail.text).toContain("[TEST] Klaxon test page for Maria: no action needed");
    // The rig's gateway signs acknowledge links, yet a test page has nothing to acknowledge.
    expect(mail.text).toContain("This is a test page: there is nothing to acknowledge.");
    expect(mail.text).not.toMatch(/\/ack\/|klaxon ack/i);
    expect(mail.html).not.toMatch(/\/ack\/|Acknowledge/);
    expect(rig.peer.messages.slice(mailed)).toHaveLength(1);

    const view = (await rig.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    expect(channelOf(view, "email").verified_at).toBe(answer.body.results[0].verified_at);
    // The phone was not tested, so it stays unverified.
    expect(channelOf(view, "sms").verified_at).toBeNull();
    const after = await journalCounts(rig.gw);
    expect(after).toEqual({...before, audit: before.audit + 1});
    const audit = await rig.gw.call("GET", `/api/v1/audit?subject_id=${maria}&action=recipient.test_page`);
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({
      actor: {type: "api_key"},
      subject: {type: "recipient", id: maria},
      detail: {results: [{channel: "email", outcome: "delivered"}]}
    });

    // A corrected address has not been tested yet.
    const corrected = await rig.gw.call("PATCH", `/api/v1/recipients/${maria}`, {body: {email: "maria.k@factory.lan"}});
    expect(channelOf(corrected.body, "email").verified_at).toBeNull();
  });

  it("reports an unavailable channel with the reason /readyz gives, sending and verifying nothing", async () => {
    const rig = shared();
    const mailed = rig.peer.messages.length;
    const maria = await rig.recipient({phone: "+4915112345678"});
    const ready = await rig.gw.call("GET", "/readyz");
    const smsReason = ready.body.channels.find((channel: {channel: string}) => channel.channel === "sms").reason;

    const answer = await rig.gw.call("POST", `/api/v1/recipients/${maria}/test`, {body: {channel: "sms"}});

    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([
      {channel: "sms", contact: "+49********678", outcome: "unavailable", detail: smsReason, verified_at: null}
    ]);
    expect(smsReason).toEqual(expect.any(String));
    expect(channelOf((await rig.gw.call("GET", `/api/v1/recipients/${maria}`)).body, "sms").verified_at).toBeNull();
    expect(rig.peer.messages.slice(mailed)).toHaveLength(0);
  });

  it("limits tests per contact: 30 recipients sharing one address get one test mail, not 30", async () => {
    const rig = shared();
    const mailed = rig.peer.messages.length;
    const office = {email: "shift-office@factory.lan"};
    const people = [];
    for (let index = 0; index < 30; index++) people.push(await rig.recipient({name: `Person ${index}`, ...office}));
    const answers = [];
    for (const uuid of people)
      answers.push(await rig.gw.call("POST", `/api/v1/recipients/${uuid}/test`, {body: {channel: "email"}}));
    expect(answers.map((answer) => answer.status)).toEqual([200, ...Array(29).fill(429)]);
    expect(answers[1].body.detail).toMatch(/^email s\*+@factory\.lan of Person 1 had a test page less than 30 s ago/);
    await rig.peer.next();
    expect(rig.peer.messages.slice(mailed)).toHaveLength(1);
  });
});

describe("POST /api/v1/recipients/{uuid}/test, through recording drivers on a manual clock", () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 8, 0, 0));
  const email = new RecordingDriver("email");
  const telegram = new RecordingDriver("telegram_voice", 1);
  const sms = new RecordingDriver("sms");
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock, drivers: () => [email, telegram, sms]});
  });
  afterAll(async () => {
    await gw.stop();
  });

  it("tests every channel with a contact when no channel is named, and a missing contact is reported", async () => {
    telegram.script({kind: "fail", message: "chat not found", permanent: true});
    const mailed = email.deliveries.length;
    const alice = await createRecipient(gw, {phone: null, telegram_id: "4242", email: "alice.all@example.com"});

    const all = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {body: {}});

    expect(all.status).toBe(200);
    expect(
      all.body.results.map((result: {channel: string; outcome: string}) => [result.channel, result.outcome])
    ).toEqual([
      ["telegram_voice", "failed"],
      ["email", "sent"]
    ]);
    expect(email.deliveries.slice(mailed)).toHaveLength(1);
    expect(email.deliveries[mailed].alerts[0].message).toBe("[TEST] Klaxon test page for Alice: no action needed");
    const view = (await gw.call("GET", `/api/v1/recipients/${alice}`)).body;
    expect(channelOf(view, "email").verified_at).toEqual(expect.any(String));
    expect(channelOf(view, "telegram_voice").verified_at).toBeNull();

    const noPhone = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {body: {channel: "voice_call"}});
    expect(noPhone.body.results).toEqual([
      {channel: "voice_call", contact: null, outcome: "unavailable", detail: "no phone number", verified_at: null}
    ]);
  });

  it("counts an SMS as verified by its delivery report, and not when an awaited report never came", async () => {
    const alice = await createRecipient(gw, {email: null});
    const bob = await createRecipient(gw, {name: "Bob", email: null, phone: "+4915112345679"});
    sms.script(
      {
        kind: "result",
        result: {
          outcome: "sent",
          detail: "+CMGS: 12",
          confirmation: Promise.resolve({outcome: "delivered", detail: "report: delivered"})
        }
      },
      {kind: "result", result: {outcome: "sent", detail: "+CMGS: 13", confirmation: Promise.resolve(null)}}
    );

    const confirmed = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {body: {channel: "sms"}});
    expect(confirmed.body.results).toEqual([
      expect.objectContaining({outcome: "delivered", detail: "report: delivered", verified_at: expect.any(String)})
    ]);
    const unconfirmed = await gw.call("POST", `/api/v1/recipients/${bob}/test`, {body: {channel: "sms"}});
    expect(unconfirmed.body.results).toEqual([
      expect.objectContaining({
        outcome: "sent",
        detail: "+CMGS: 13; no delivery report came in time",
        verified_at: null
      })
    ]);
    expect(channelOf((await gw.call("GET", `/api/v1/recipients/${bob}`)).body, "sms").verified_at).toBeNull();

    // Deleting a recipient drops what was verified with it.
    expect((await gw.call("DELETE", `/api/v1/recipients/${alice}`)).status).toBe(204);
    const stored = JSON.parse(readFileSync(join(gw.dataDir, "config.json"), "utf8"));
    expect(
      stored.contact_verifications.filter((entry: {recipient_uuid: string}) =>
        [alice, bob].includes(entry.recipient_uuid)
      )
    ).toEqual([]);
  });

  it("allows one test per contact and channel every 30 s, answering 429 with Retry-After", async () => {
    const mailed = email.deliveries.length;
    const alice = await createRecipient(gw, {email: "alice.limit@example.com"});
    const bob = await createRecipient(gw, {name: "Bob", email: "bob@example.com"});
    const test = (uuid: string) => gw.call("POST", `/api/v1/recipients/${uuid}/test`, {body: {channel: "email"}});

    expect((await test(alice)).status).toBe(200);
    clock.advance(10_000);
    const refused = await test(alice);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.headers.get("retry-after")).toBe("20");
    expect(refused.body.detail).toContain("try again in 20 s");
    // Another person is not held back by Alice's test.
    expect((await test(bob)).status).toBe(200);
    expect(email.deliveries.slice(mailed)).toHaveLength(2);

    clock.advance(20_000);
    expect((await test(alice)).status).toBe(200);
    expect(email.deliveries.slice(mailed)).toHaveLength(3);
  });

  it("answers 404 for an unknown recipient and 400 for an unknown channel or field", async () => {
    const alice = await createRecipient(gw, {email: "alice.refused@example.com"});
    const missing = await gw.call("POST", "/api/v1/recipients/00000000-0000-4000-8000-000000000000/test", {
      body: {channel: "email"}
    });
    expect(missing.status).toBe(404);
    expect(missing.body.type).toContain("not_found");

    const badChannel = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {body: {channel: "pigeon"}});
    expect(badChannel.status).toBe(400);
    expect(badChannel.headers.get("content-type")).toContain("application/problem+json");
    const extra = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {body: {channel: "email", loud: true}});
    expect(extra.status).toBe(400);

    const readOnly = await gw.call("POST", `/api/v1/recipients/${alice}/test`, {
      key: (await gw.call("POST", "/api/v1/keys", {body: {name: "viewer", scopes: ["recipients:read"]}})).body.key,
      body: {channel: "email"}
    });
    expect(readOnly.status).toBe(403);
  });
});
