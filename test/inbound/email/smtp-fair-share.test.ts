import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {emailRig, type EmailRig} from "../../channels/email-rig.js";
import {freePort} from "../../support/mosquitto.js";
import {sendWithSmtplib} from "../../support/smtplib.js";
import {authPlain, openRawSmtp, type RawSmtpSession} from "../../support/smtp-client.js";

// Issue 29 item 4: one host on the plant LAN must not be able to shut the email intake for the
// others. Each client plays its own host by connecting from its own 127.0.0.x.
const HOLDER = "127.0.0.1";
const DEVICE = "127.0.0.2";
const NOOPER = "127.0.0.3";
const GUESSER = "127.0.0.4";
const DOMAIN = "alerts.plant.lan";
const USER = "nas";
const PASSWORD = "Inb0und-Secret-7";
const SESSION_MAX_SECONDS = 2;

let rig: EmailRig;
let port: number;
let address: string;

beforeAll(async () => {
  port = await freePort();
  rig = await emailRig({
    inboundEmail: {
      port,
      address: "127.0.0.1",
      domain: DOMAIN,
      user: USER,
      password: PASSWORD,
      session_max_seconds: SESSION_MAX_SECONDS
    }
  });
  const target = await rig.recipient({name: "Storage admin", email: "storage@factory.lan"});
  const rules = [
    {field: "subject", match: "regex", pattern: "Volume (\\d+) .*degraded", action: "fire", alert_key: "volume-{1}"}
  ];
  const created = await rig.gw.call("POST", "/api/v1/integrations", {
    body: {name: "nas-01", kind: "email", target, rules}
  });
  expect(created.status).toBe(201);
  address = created.body.address as string;
});
afterAll(async () => {
  await rig?.gw.stop();
  await rig?.peer.stop();
});

/** A device at DEVICE mails one alert with Python's smtplib, logging in as it should. */
function deviceMails(subject: string) {
  return sendWithSmtplib({
    port,
    source: DEVICE,
    login: [USER, PASSWORD],
    mails: [{shape: "plain", from: "nas-01@plant.lan", to: [address], subject, text: "disk failed"}]
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the SMTP intake shares itself fairly between client addresses", () => {
  it("serves a second device while one address holds 64 sessions: that address gets 421 past its 8", async () => {
    const held = await Promise.all(Array.from({length: 64}, () => openRawSmtp(port, HOLDER)));
    try {
      expect(await deviceMails("[nas-01] Volume 1 on nas-01 is degraded")).toEqual([{ok: true}]);
      expect((await rig.peer.next()).subject).toContain("Volume 1 on nas-01 is degraded");
      const codes = held.map(({greeting}) => greeting?.code);
      expect(codes.filter((code) => code === 220)).toHaveLength(8);
      expect(codes.filter((code) => code === 421)).toHaveLength(56);
      expect(held.find(({greeting}) => greeting?.code === 421)?.greeting?.text).toMatch(/too many sessions from/i);
    } finally {
      for (const {session} of held) session.destroy();
      await Promise.all(held.map(({session}) => session.whenClosed()));
    }
    expect(rig.gw.logLines.some((line) => line.includes("SMTP session refused") && line.includes(HOLDER))).toBe(true);
  });

  it("closes a session at its time limit however often it sends NOOP, and the slot is free again", async () => {
    const {session, greeting} = await openRawSmtp(port, NOOPER);
    expect(greeting?.code).toBe(220);
    const started = Date.now();
    expect((await session.command("EHLO holder.plant.lan"))?.code).toBe(250);
    const answers: Array<number | undefined> = [];
    while (!session.closed && Date.now() - started < (SESSION_MAX_SECONDS + 3) * 1000) {
      answers.push((await session.command("NOOP"))?.code);
      await sleep(1000);
    }
    expect(session.closed).toBe(true);
    // Each NOOP before the limit was answered 250; the limit's own 421 came instead of a reply.
    expect(answers.slice(0, SESSION_MAX_SECONDS - 1).every((code) => code === 250)).toBe(true);
    expect(Date.now() - started).toBeLessThan((SESSION_MAX_SECONDS + 2) * 1000);
    const again = await openRawSmtp(port, NOOPER);
    expect(again.greeting?.code).toBe(220);
    again.session.destroy();
  });

  it("throttles 50 wrong AUTH PLAIN guesses from one address and logs them without the password", async () => {
    // Five guessers at once, ten guesses each; a 421 closes a session, so the next guess opens another.
    const guesser = async (first: number) => {
      const answers: number[] = [];
      let session: RawSmtpSession | null = null;
      for (let guess = first; guess < first + 10; guess++) {
        if (!session) {
          session = (await openRawSmtp(port, GUESSER)).session;
          await session.command("EHLO guesser.plant.lan");
        }
        const answer = (await session.command(`AUTH PLAIN ${authPlain(USER, `guess-${guess}-Pw`)}`))?.code ?? 0;
        answers.push(answer);
        if (answer === 421) {
          await session.whenClosed();
          session = null;
        }
      }
      session?.destroy();
      return answers;
    };
    const answers = (await Promise.all([0, 10, 20, 30, 40].map(guesser))).flat();
    const failed = answers.filter((code) => code === 535).length;
    const refused = answers.filter((code) => code === 421).length;
    // The budget is 10 a minute; one more may have refilled while the test ran.
    expect(failed).toBeGreaterThanOrEqual(10);
    expect(failed).toBeLessThanOrEqual(11);
    expect(refused).toBe(50 - failed);

    // The right password from the guessing address waits out the throttle too; another device is untouched.
    const locked = (await openRawSmtp(port, GUESSER)).session;
    await locked.command("EHLO nas.plant.lan");
    expect((await locked.command(`AUTH PLAIN ${authPlain(USER, PASSWORD)}`))?.code).toBe(421);
    locked.destroy();
    expect(await deviceMails("[nas-01] Volume 2 on nas-01 is degraded")).toEqual([{ok: true}]);

    const lines = rig.gw.logLines.filter((line) => /SMTP login/.test(line));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    // Folded by the logger: a burst is one line for failures and one for refusals, not 50.
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines.every((line) => line.includes(GUESSER))).toBe(true);
    expect(rig.gw.logLines.join("\n")).not.toMatch(/guess-\d+-Pw|Inb0und-Secret/);
  });
});
