import {describe, expect, it} from "vitest";
import {emailRig, eventually, PASSWORD, stopEmailRigs} from "./email-rig.js";

stopEmailRigs();

const attemptsOf = (n: any) =>
  n.attempts.map((a: {channel: string; outcome: string; detail: string | null}) => [a.channel, a.outcome, a.detail]);

describe("email channel", () => {
  it("mails an alert with its subject, plain text, HTML and an Acknowledge link, and records the server's reply", async () => {
    const r = await emailRig();
    // Her quiet hours give her zone: the mail's times are in it, named, not in the box's UTC (issue 33).
    const quiet_hours = {start: "22:00", end: "06:00", timezone: "America/New_York", allow_priorities: ["critical"]};
    const maria = await r.recipient({quiet_hours});
    const id = await r.send(maria, {link: "https://scada.factory.lan/press/7"});
    const mail = await r.peer.next();

    expect(mail.envelope).toEqual({from: "klaxon@factory.lan", to: ["maria@factory.lan"]});
    expect(r.peer.logins).toContainEqual({username: "klaxon", password: PASSWORD});
    expect(mail.subject).toBe("[CRITICAL] press-7: Oil temperature high");
    expect(mail.headers.get("to")).toBe("Maria <maria@factory.lan>");
    expect(mail.headers.get("auto-submitted")).toBe("auto-generated");
    expect(mail.headers.get("x-klaxon-notifications")).toBe(id);
    expect(mail.text).toContain("[CRITICAL] Oil temperature high");
    expect(mail.text).toContain("Source:  press-7");
    expect(mail.text).toContain("Link:    https://scada.factory.lan/press/7");
    expect(mail.text).toMatch(/Raised: +\d+ \w+ \d{4}, \d\d:\d\d:\d\d (EST|EDT|GMT-[45])\s/);
    expect(mail.text).toMatch(/It works until \d+ \w+ \d{4}, \d\d:\d\d:\d\d (EST|EDT|GMT-[45])\./);
    expect(mail.text).toContain(id);
    const link = /http:\/\/klaxon\.factory\.lan:8080\/ack\/\S+/.exec(mail.text ?? "")?.[0];
    expect(link).toBeDefined();
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain(`href="https://scada.factory.lan/press/7"`);
    expect(mail.html).toContain("Oil temperature high");

    const n = await r.notification(id);
    expect(n.status).toBe("notifying");
    expect(n.attempts).toHaveLength(1);
    expect(n.attempts[0]).toMatchObject({channel: "email", outcome: "delivered", target: expect.stringContaining("*")});
    // The server's answer is no error (issue 33): `detail` carries it, the deprecated `error` stays null.
    expect(n.attempts[0].detail).toMatch(/^accepted by the SMTP server: 250 .*\(message id <.+>\)$/);
    expect(n.attempts[0].error).toBeNull();
    const email = await r.emailState();
    expect(email).toMatchObject({available: true, reason: null});
    expect(email.details).toMatchObject({
      host: "127.0.0.1",
      port: r.peer.port,
      secure: false,
      state: "ok",
      last_error: null,
      ack_links: "on, valid 7 days"
    });
    expect(email.details.last_success_at).not.toBeNull();
  });

  it("leaves the link out and says why when public_url is empty", async () => {
    const r = await emailRig({publicUrl: ""});
    await r.send(await r.recipient());
    const mail = await r.peer.next();
    expect(mail.text).toContain("This email has no acknowledge link (public_url is not set");
    expect(mail.text).not.toContain("/ack/");
    expect(mail.html).not.toContain("/ack/");
    expect((await r.emailState()).details.ack_links).toMatch(/public_url is not set/);
  });

  it("marks the contact unavailable when the server rejects the address with 550", async () => {
    const r = await emailRig();
    r.peer.rejectRecipient("gone@factory.lan");
    const maria = await r.recipient({email: "gone@factory.lan"});
    const id = await r.send(maria);
    const n = await r.notification(id);
    expect(attemptsOf(n)).toEqual([
      ["email", "failed", expect.stringMatching(/^SMTP RCPT TO answered 550 .*User unknown/)]
    ]);
    const recipient = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    const email = recipient.channels.find((c: {channel: string}) => c.channel === "email");
    expect(email.available).toBe(false);
    expect(email.reason).toMatch(/permanent failure since .*550/);
    // The server itself is fine: email stays available for everyone else, and /readyz (no key
    // needed) does not repeat a reply that names the person.
    const state = await r.emailState();
    expect(state).toMatchObject({available: true, details: {state: "ok", last_error: null}});
    expect(JSON.stringify(state)).not.toContain("gone@factory.lan");
  });

  it("fails a 451 for this email only: the contact and the server stay available", async () => {
    const r = await emailRig();
    r.peer.behaviour = "defer";
    const maria = await r.recipient();
    const id = await r.send(maria);
    const n = await r.notification(id);
    expect(attemptsOf(n)).toEqual([["email", "failed", expect.stringMatching(/451 Requested action aborted/)]]);
    const recipient = (await r.gw.call("GET", `/api/v1/recipients/${maria}`)).body;
    expect(recipient.channels.find((c: {channel: string}) => c.channel === "email").available).toBe(true);
    expect(await r.emailState()).toMatchObject({available: true});
  });

  it("while the server is down: fails the attempt with the reason, moves the chain on, reports SMTP failing, and recovers by itself", async () => {
    const r = await emailRig();
    await r.peer.down();
    const maria = await r.recipient({phone: "+4915112345678", channel_order: ["email", "sms"]});
    const first = await r.send(maria);
    let n = await r.notification(first);
    expect(attemptsOf(n)).toEqual([
      ["email", "failed", expect.stringMatching(/^SMTP connection failed \(ECONNREFUSED\)/)]
    ]);

    const failing = await r.emailState();
    expect(failing.available).toBe(false);
    expect(failing.reason).toMatch(
      new RegExp(`^SMTP server 127.0.0.1:${r.peer.port} is failing: SMTP connection failed`)
    );
    expect(failing.details.state).toBe("failing");

    // Known to fail: a new alert (for someone else, so it is not folded into Maria's running
    // chain) does not try email; SMS, which this box has no modem for, is not in its plan at all.
    const jonas = await r.recipient({
      name: "Jonas",
      email: "jonas@factory.lan",
      phone: "+4915112345679",
      channel_order: ["email", "sms"]
    });
    const second = await r.send(jonas, {message: "Press 7 stopped"});
    n = await r.notification(second);
    expect(attemptsOf(n)).toEqual([["email", "skipped", expect.stringMatching(/is failing/)]]);
    expect(n.channels_left_out).toEqual([
      {channel: "sms", recipient_uuid: jonas, reason: "no modem is configured (modem.port)"}
    ]);

    await r.peer.up();
    await eventually(
      "email available again",
      () => r.emailState(),
      (state) => state.available
    );
    const third = await r.send(await r.recipient({name: "Ana", email: "ana@factory.lan"}), {
      message: "Press 7 running again"
    });
    expect((await r.peer.next()).subject).toBe("[CRITICAL] press-7: Press 7 running again");
    expect(attemptsOf(await r.notification(third))[0]).toEqual([
      "email",
      "delivered",
      expect.stringMatching(/^accepted/)
    ]);
    expect(r.gw.logLines.some((line) => line.includes("SMTP server works again"))).toBe(true);
  });

  it("cuts off a server that never answers after timeout_seconds", async () => {
    const r = await emailRig({smtp: {timeout_seconds: 1, check_seconds: 3600}});
    r.peer.behaviour = "hang";
    const maria = await r.recipient();
    const id = await r.send(maria);
    const n = await r.notification(id);
    expect(attemptsOf(n)).toEqual([
      ["email", "failed", expect.stringMatching(/SMTP server did not answer in time|SMTP connection failed/)]
    ]);
    expect((await r.emailState()).available).toBe(false);
  });

  it("fails on a refused login without the password ever reaching a log line or an answer", async () => {
    const r = await emailRig();
    r.peer.changePassword("rotated-on-the-server");
    const maria = await r.recipient();
    const id = await r.send(maria);
    const n = await r.notification(id);
    expect(attemptsOf(n)).toEqual([
      ["email", "failed", expect.stringMatching(/^SMTP login refused: 535 Authentication credentials invalid/)]
    ]);
    // The peer saw the password, so it was really in play.
    expect(r.peer.logins).toContainEqual({username: "klaxon", password: PASSWORD});
    const state = await r.emailState();
    expect(state.available).toBe(false);
    expect(state.reason).toMatch(/login refused/);

    const base64 = Buffer.from(PASSWORD).toString("base64");
    const answers = [
      await r.gw.call("GET", `/api/v1/notifications/${id}`),
      await r.gw.call("GET", "/readyz"),
      await r.gw.call("GET", `/api/v1/recipients/${maria}`),
      await r.gw.call("GET", "/api/v1/audit?limit=200")
    ].map((answer) => JSON.stringify(answer.body));
    for (const text of [...answers, ...r.gw.logLines]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(base64);
    }
    expect(r.gw.logLines.some((line) => line.includes("SMTP server failing"))).toBe(true);
  });

  it("reports a login refused at start on /readyz and skips email until it works", async () => {
    const r = await emailRig({smtp: {password: "not-the-password"}});
    const state = await r.emailState();
    expect(state).toMatchObject({available: false, details: {state: "failing", login: "yes"}});
    expect(state.reason).toMatch(/SMTP login refused: 535/);
    const id = await r.send(await r.recipient());
    expect(attemptsOf(await r.notification(id))).toEqual([
      ["email", "skipped", expect.stringMatching(/login refused/)]
    ]);
  });

  it("uses STARTTLS when the server offers it, and will not send past a certificate it cannot verify", async () => {
    const r = await emailRig({peer: {offerStartTls: true}});
    const state = await r.emailState();
    expect(state.available).toBe(false);
    expect(state.reason).toMatch(/SMTP connection failed \(CERT_HAS_EXPIRED\)/);
    const id = await r.send(await r.recipient());
    expect(attemptsOf(await r.notification(id))).toEqual([
      ["email", "skipped", expect.stringMatching(/certificate has expired/)]
    ]);
    expect(r.peer.messages).toHaveLength(0);
    expect(r.peer.logins).toHaveLength(0);
  });
});
