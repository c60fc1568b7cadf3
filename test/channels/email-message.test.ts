import {describe, expect, it} from "vitest";
import {randomBytes} from "node:crypto";
import {composeEmail, createdAtOf, subjectOf} from "../../src/channels/email/email-message.js";
import {AckLinkSigner} from "../../src/lib/ack-link.js";
import {classifySmtpFailure} from "../../src/channels/email/smtp-failure.js";
import {ManualClock} from "../../src/lib/clock.js";
import {newId} from "../../src/lib/ids.js";
import type {AlertSummary} from "../../src/channels/channel.js";

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const alert = (fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: newId("notif", T0),
  priority: "critical",
  message: "Oil temperature high",
  source: "press-7",
  link: null,
  ...fields
});
const noLink = {url: null, missingBecause: "public_url is not set"} as const;
const maria = {uuid: "4b0e7f7e-1c39-4c4e-9d0b-1f0d6c3f3a11", name: "Maria", email: "maria@factory.lan"};

describe("email message", () => {
  it("names the priority, source and message in the subject of a single alert", () => {
    expect(subjectOf("Maria", [alert()])).toBe("[CRITICAL] press-7: Oil temperature high");
    expect(subjectOf("Maria", [alert({source: null, priority: "low", message: "Disk\nalmost full"})])).toBe(
      "[LOW] Disk almost full"
    );
  });

  it("counts several alerts in the subject and leads with the most urgent", () => {
    const subject = subjectOf("Maria", [
      alert({priority: "low", message: "Filter due"}),
      alert({priority: "critical", message: "Press 7 stopped"}),
      alert({priority: "high", message: "Coolant low"})
    ]);
    expect(subject).toBe("3 alerts for Maria: [CRITICAL] press-7: Press 7 stopped and 2 more");
  });

  it("escapes alert text in the HTML part and keeps it verbatim in the text part", () => {
    const hostile = alert({
      message: `<script>alert("x")</script> & <b>bold</b>`,
      source: `"><img src=x onerror=alert(1)>`,
      link: `https://scada.lan/?a=1&b="2"`
    });
    const email = composeEmail({
      recipientName: "<Maria>",
      alerts: [hostile],
      ack: {url: "http://klaxon.lan/ack/v1.abc.def", validUntilMs: T0}
    });
    expect(email.html).not.toContain("<script>");
    expect(email.html).not.toContain("<img");
    expect(email.html).not.toContain("<b>bold");
    expect(email.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");
    expect(email.html).toContain(`href="https://scada.lan/?a=1&amp;b=&quot;2&quot;"`);
    expect(email.html).toContain("&lt;Maria&gt;");
    expect(email.text).toContain(`<script>alert("x")</script> & <b>bold</b>`);
  });

  it("links an alert's source only when it is a web address", () => {
    const email = composeEmail({recipientName: "Maria", alerts: [alert({link: "javascript:alert(1)"})], ack: noLink});
    expect(email.html).not.toContain("javascript:");
  });

  it("says why there is no acknowledge link when links are off", () => {
    const email = composeEmail({recipientName: "Maria", alerts: [alert()], ack: noLink});
    expect(email.text).toContain("This email has no acknowledge link (public_url is not set)");
    expect(email.html).toContain("This email has no acknowledge link (public_url is not set)");
    expect(email.html).not.toContain("/ack/");
  });

  it("offers no way to acknowledge a test page, which has nothing behind it", () => {
    const message = composeEmail({recipientName: "Maria", alerts: [alert({priority: "info"})], ack: null});
    expect(message.text).toContain("This is a test page: there is nothing to acknowledge.");
    expect(message.text).not.toMatch(/acknowledge link|klaxon ack/);
    expect(message.html).toContain("This is a test page: there is nothing to acknowledge.");
    expect(message.html).not.toMatch(/\/ack\/|>Acknowledge/);
  });

  it("gives times in the reader's zone with its abbreviation, not the box's UTC (issue 33)", () => {
    const ack = {url: "https://klaxon.factory.lan/ack/x", validUntilMs: T0 + 7 * 86_400_000};
    const email = composeEmail({recipientName: "Maria", alerts: [alert()], ack, timeZone: "Europe/Berlin"});
    for (const part of [email.text, email.html]) {
      expect(part).toMatch(/Raised:? +23 Nov 2026, 10:00:00 CET/);
      expect(part).toContain("It works until 30 Nov 2026, 10:00:00 CET.");
      expect(part).not.toContain("UTC");
    }
    const short = composeEmail({recipientName: "Maria", alerts: [alert()], ack, timeZone: "Europe/Berlin"}, "short");
    expect(short.text).toContain("It works until 30 Nov 2026, 10:00:00 CET.");
  });

  it("reads an alert's creation time from its id", () => {
    expect(createdAtOf(newId("notif", T0))?.getTime()).toBe(T0);
    expect(createdAtOf("notif_not-an-id")).toBeNull();
  });
});

describe("acknowledge link tokens", () => {
  const clock = new ManualClock(T0);
  const signer = new AckLinkSigner(randomBytes(32), clock, {publicUrl: "http://klaxon.lan:8080/", lifetimeDays: 7});
  const ids = [newId("notif", T0), newId("notif", T0)];

  it("round-trips the alerts, the person and the expiry", () => {
    const link = signer.linkFor(ids, maria);
    expect(link?.url).toMatch(/^http:\/\/klaxon\.lan:8080\/ack\/v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const token = link!.url.split("/ack/")[1];
    expect(signer.check(token)).toEqual({
      valid: true,
      claims: {notification_ids: ids, recipient: maria, expires_at_ms: T0 + 7 * 86_400_000}
    });
  });

  it("refuses a token changed in any character, or signed with another key", () => {
    const token = signer.linkFor(ids, maria)!.url.split("/ack/")[1];
    for (let i = 0; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
      expect(signer.check(changed).valid, `changed at ${i}`).toBe(false);
    }
    const other = new AckLinkSigner(randomBytes(32), clock, {publicUrl: "http://klaxon.lan", lifetimeDays: 7});
    expect(signer.check(other.sign({notification_ids: ids, recipient: maria, expires_at_ms: T0 + 1000}))).toEqual({
      valid: false,
      reason: "invalid"
    });
    expect(signer.check("")).toEqual({valid: false, reason: "invalid"});
    expect(signer.check(`${token}.extra`)).toEqual({valid: false, reason: "invalid"});
  });

  it("expires after the configured days", () => {
    const token = signer.sign({notification_ids: ids, recipient: maria, expires_at_ms: T0 + 1000});
    clock.set(T0 + 999);
    expect(signer.check(token).valid).toBe(true);
    clock.set(T0 + 1000);
    expect(signer.check(token)).toEqual({valid: false, reason: "expired"});
  });

  it("makes no links without a public_url", () => {
    const off = new AckLinkSigner(randomBytes(32), clock, {publicUrl: " ", lifetimeDays: 7});
    expect(off.linkFor(ids, maria)).toBeNull();
    expect(off.disabledReason).toMatch(/public_url is not set/);
  });
});

describe("SMTP failures", () => {
  const password = "s3cret-Pa55";

  it("treats a 5xx to RCPT TO as permanent for the contact, and a 4xx as transient", () => {
    const rejected = {
      code: "EENVELOPE",
      command: "RCPT TO",
      responseCode: 550,
      response: "550 5.1.1 <x@lan>: User unknown",
      message: "Can't send mail"
    };
    expect(classifySmtpFailure(rejected, password)).toEqual({
      reason: "SMTP RCPT TO answered 550 5.1.1 <x@lan>: User unknown",
      permanent: true,
      serverFailing: false,
      tooBig: false
    });
    expect(classifySmtpFailure({...rejected, responseCode: 451, response: "451 try later"}, password)).toMatchObject({
      permanent: false,
      serverFailing: false
    });
  });

  it("counts connection, timeout and login failures against the server, never permanent", () => {
    for (const code of ["ECONNECTION", "ETIMEDOUT", "EAUTH", "ESOCKET"]) {
      expect(classifySmtpFailure({code, message: "x"}, password)).toMatchObject({
        permanent: false,
        serverFailing: true
      });
    }
    expect(
      classifySmtpFailure(
        {code: "EENVELOPE", command: "MAIL FROM", responseCode: 553, response: "553 sender rejected"},
        password
      )
    ).toMatchObject({permanent: false, serverFailing: true});
  });

  it("sorts a message refused for its size apart: neither the address's fault nor the server's", () => {
    const tooBig = [
      {
        code: "EENVELOPE",
        command: "MAIL FROM",
        responseCode: 552,
        response: "552 Error: message exceeds fixed maximum"
      },
      {code: "EMESSAGE", command: "DATA", responseCode: 552, response: "552 Error: message exceeds fixed maximum"},
      {code: "EMESSAGE", command: "DATA", responseCode: 554, response: "554 5.3.4 Message too big for system"}
    ];
    for (const error of tooBig)
      expect(classifySmtpFailure(error, password)).toMatchObject({
        tooBig: true,
        permanent: false,
        serverFailing: false
      });
    // RFC 5321: a 552 to RCPT TO is a mailbox over its quota, not a message too big.
    const full = {code: "EENVELOPE", command: "RCPT TO", responseCode: 552, response: "552 5.2.2 Mailbox full"};
    expect(classifySmtpFailure(full, password)).toMatchObject({tooBig: false, permanent: true});
  });

  it("removes the password, plain or base64, from the reason", () => {
    const echoed = {
      code: "EAUTH",
      response: `535 bad credentials ${password} ${Buffer.from(password).toString("base64")}`,
      message: "Invalid login"
    };
    const {reason} = classifySmtpFailure(echoed, password);
    expect(reason).not.toContain(password);
    expect(reason).not.toContain(Buffer.from(password).toString("base64"));
    expect(reason).toContain("[redacted]");
  });
});
