import {randomBytes} from "node:crypto";
import {statSync} from "node:fs";
import {describe, expect, it} from "vitest";
import {emailRig, PUBLIC_URL, shareEmailRig, stopEmailRigs, type EmailRig} from "./email-rig.js";
import {AckLinkSigner} from "../../src/lib/ack-link.js";
import {ManualClock} from "../../src/lib/clock.js";
import {readableTime} from "../../src/lib/local-time.js";
import {launchChromium, openContext, PHONE} from "../dashboard/support/browser.js";

stopEmailRigs();

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const DAY_MS = 86_400_000;
const FORM = {"Content-Type": "application/x-www-form-urlencoded"};

interface Page {
  status: number;
  headers: Headers;
  html: string;
}

/** Opens a link as a browser would, on the test gateway instead of the public name. */
async function open(r: EmailRig, link: string, method: "GET" | "POST" = "GET"): Promise<Page> {
  expect(link.startsWith(`${PUBLIC_URL}/ack/`)).toBe(true);
  // A submitted form without fields: an empty urlencoded body, as every browser sends it.
  const response = await fetch(
    r.gw.url + link.slice(PUBLIC_URL.length),
    method === "POST" ? {method, headers: FORM, body: ""} : {method}
  );
  return {status: response.status, headers: response.headers, html: await response.text()};
}

function linkIn(text: string | null): string {
  const link = /http:\/\/\S+\/ack\/\S+/.exec(text ?? "")?.[0];
  if (!link) throw new Error(`no acknowledge link in: ${text}`);
  return link;
}

/**
 * The acknowledge link of the next mail to `address`. The shared rig's peer also holds mail that
 * other tests left unread: each test's recipient has its own address, so it reads only its own.
 */
async function linkMailedTo(r: EmailRig, address: string): Promise<string> {
  for (;;) {
    const mail = await r.peer.next();
    if (mail.envelope.to.includes(address)) return linkIn(mail.text);
  }
}

async function acknowledgements(r: EmailRig, id: string): Promise<any[]> {
  return (await r.gw.call("GET", `/api/v1/audit?subject_id=${id}&action=notification.acknowledged`)).body.items;
}

// One gateway serves the tests that need nothing of their own (a recipient and address each); the
// tests on a manual clock, and the restart, get a gateway of their own, one after the other.
describe("email acknowledge links", () => {
  const shared = shareEmailRig();

  it("shows a confirm page on GET that changes nothing, and acknowledges on the form POST as the recipient", async () => {
    const r = shared();
    // Her quiet hours' zone: the page tells its times in it, as her email did (issue 33).
    const quiet_hours = {start: "22:00", end: "06:00", timezone: "America/New_York", allow_priorities: ["critical"]};
    const maria = await r.recipient({quiet_hours});
    const id = await r.send(maria);
    const link = await linkMailedTo(r, "maria@factory.lan");
    const newYork = String.raw`\d+ \w+ \d{4}, \d\d:\d\d:\d\d (EST|EDT|GMT-[45])`;

    // Mail scanners and link previews open links, some more than once.
    for (let i = 0; i < 2; i++) {
      const page = await open(r, link);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(page.html).toContain('<html lang="en">');
      expect(page.html).toContain('font-family:system-ui,-apple-system,"Segoe UI"');
      expect(page.html).toContain("Acknowledge 1 alert?");
      expect(page.html).toContain("Oil temperature high");
      expect(page.html).toContain("open: people are being paged");
      expect(page.html).toContain('<form method="post"><button type="submit">Acknowledge 1 alert</button></form>');
      expect(page.html).toContain("Maria &lt;maria@factory.lan&gt;");
      expect(page.html).toMatch(new RegExp(`raised ${newYork}</p>`));
    }
    expect((await r.notification(id)).status).toBe("notifying");
    expect(await acknowledgements(r, id)).toHaveLength(0);

    const done = await open(r, link, "POST");
    expect(done.status).toBe(200);
    expect(done.html).toContain("Acknowledged 1 alert");
    expect(done.html).toContain("The escalation has stopped");
    const n = await r.notification(id);
    expect(n).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "email",
      acknowledged_by: "Maria <maria@factory.lan>"
    });
    const audit = await acknowledgements(r, id);
    expect(audit).toHaveLength(1);
    expect(audit[0].detail).toMatchObject({via: "email", by: "Maria <maria@factory.lan>", from: "notifying"});
    // The person the link was mailed to, not the gateway.
    expect(audit[0].actor).toMatchObject({type: "recipient", id: maria});

    // Pressing again, or opening the link later, says it is done and changes nothing.
    const again = await open(r, link, "POST");
    expect(again.status).toBe(200);
    expect(again.html).toContain("Nothing left to acknowledge");
    const later = await open(r, link);
    expect(later.html).toContain("Already closed");
    expect(later.html).toMatch(new RegExp(`acknowledged by Maria &lt;maria@factory.lan&gt; via email at ${newYork}<`));
    expect(later.html).not.toContain("<form");
    expect((await r.notification(id)).acknowledged_at).toBe(n.acknowledged_at);
    expect(await acknowledgements(r, id)).toHaveLength(1);
  });

  it("refuses forged, tampered and made-up links with 403 and acknowledges nothing", async () => {
    const r = shared();
    const maria = await r.recipient({email: "maria.forged@factory.lan"});
    const id = await r.send(maria);
    const link = await linkMailedTo(r, "maria.forged@factory.lan");
    const [version, payload, signature] = link.slice(`${PUBLIC_URL}/ack/`.length).split(".");

    // The same claims signed with a key that is not this gateway's.
    const stranger = new AckLinkSigner(
      randomBytes(32),
      {now: () => Date.now()},
      {publicUrl: PUBLIC_URL, lifetimeDays: 7}
    );
    const forged = stranger.linkFor([id], {uuid: maria, name: "Maria", email: "maria.forged@factory.lan"})!.url;
    // The payload re-encoded to name someone else, with the original signature.
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const altered = Buffer.from(JSON.stringify({...claims, r: {...claims.r, name: "Mallory"}})).toString("base64url");
    const bad = [
      forged,
      `${PUBLIC_URL}/ack/${version}.${altered}.${signature}`,
      `${PUBLIC_URL}/ack/${version}.${payload}.${signature.slice(0, -2)}`,
      `${PUBLIC_URL}/ack/${version}.${payload}`,
      `${PUBLIC_URL}/ack/not-a-link`
    ];
    for (const url of bad) {
      for (const method of ["GET", "POST"] as const) {
        const page = await open(r, url, method);
        expect(page.status, `${method} ${url}`).toBe(403);
        expect(page.html).toContain("Invalid acknowledge link");
        expect(page.html).toContain("Nothing was acknowledged.");
        expect(page.html).not.toContain("Oil temperature high");
      }
    }
    expect((await r.notification(id)).status).toBe("notifying");
    expect(await acknowledgements(r, id)).toHaveLength(0);
    // The real link still works.
    expect((await open(r, link, "POST")).status).toBe(200);
  });

  it("keeps the JSON-only rule for the API while the form post works", async () => {
    const r = shared();
    const id = await r.send(await r.recipient({email: "maria.json@factory.lan"}));
    const answer = await r.gw.call("POST", `/api/v1/notifications/${id}/ack`, {raw: "by=form", headers: FORM});
    expect(answer.status).toBe(415);
    expect((await r.notification(id)).status).toBe("notifying");
    const spec = await r.gw.call("GET", "/api/v1/openapi.json");
    expect(Object.keys(spec.body.paths).some((path) => path.startsWith("/ack"))).toBe(false);
  });

  it("works in a real browser on a phone: the page's button acknowledges with no script at all", async () => {
    const r = shared();
    const id = await r.send(await r.recipient({email: "maria.phone@factory.lan"}));
    const link = await linkMailedTo(r, "maria.phone@factory.lan");
    const browser = await launchChromium();
    try {
      const {page, outside, scriptErrors} = await openContext(browser, PHONE);
      await page.goto(r.gw.url + link.slice(PUBLIC_URL.length));
      expect(await page.getByRole("heading", {level: 1}).textContent()).toBe("Acknowledge 1 alert?");
      // The inline stylesheet applies under the page's Content-Security-Policy.
      expect(
        await page
          .getByRole("button")
          .evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor)
      ).toBe("rgb(26, 86, 219)");
      expect((await r.notification(id)).status).toBe("notifying");
      await Promise.all([
        page.waitForURL(`**${link.slice(PUBLIC_URL.length)}`, {waitUntil: "load"}),
        page.getByRole("button", {name: "Acknowledge 1 alert"}).click()
      ]);
      expect(await page.getByRole("status").textContent()).toBe("Acknowledged 1 alert");
      expect(outside).toEqual([]);
      expect(scriptErrors).toEqual([]);
    } finally {
      await browser.close();
    }
    expect(await r.notification(id)).toMatchObject({status: "acknowledged", acknowledged_via: "email"});
  });
});

describe("email acknowledge links on a gateway of their own", () => {
  it("acknowledges every alert a grouped email named, skipping one resolved meanwhile", async () => {
    const clock = new ManualClock(T0);
    const r = await emailRig({gateway: {clock}});
    const runner = r.gw.gateway.services.runner;
    // Both alerts fire in one runner pass, so they leave as one email.
    await runner.stop();
    const maria = await r.recipient();
    const first = await r.send(maria, {message: "Press 7 stopped"});
    const second = await r.send(maria, {message: "Coolant low", priority: "high", source: "pump-2"});
    await runner.tick();
    await runner.idle();
    const mail = await r.peer.next();
    expect(mail.subject).toBe("2 alerts for Maria: [CRITICAL] press-7: Press 7 stopped and 1 more");
    expect(mail.headers.get("x-klaxon-notifications")).toBe(`${first} ${second}`);
    const link = linkIn(mail.text);

    const page = await open(r, link);
    expect(page.html).toContain("Acknowledge 2 alerts?");
    expect(page.html).toContain("Press 7 stopped");
    expect(page.html).toContain("Coolant low");

    expect((await r.gw.call("POST", `/api/v1/notifications/${second}/resolve`)).status).toBe(200);
    const done = await open(r, link, "POST");
    expect(done.html).toContain("Acknowledged 1 alert");
    expect(done.html).toContain("resolved: nothing left to do");
    expect((await r.notification(first)).status).toBe("acknowledged");
    expect((await r.notification(second)).status).toBe("resolved");
  });

  it("refuses an expired link with 410 and acknowledges nothing", async () => {
    const clock = new ManualClock(T0);
    const r = await emailRig({gateway: {clock}});
    const id = await r.send(await r.recipient());
    const link = linkIn((await r.peer.next()).text);
    // On the box's wall clock with its zone named (issue 33), not a bare UTC time.
    expect(r.peer.messages[0].text).toContain(`It works until ${readableTime(Date.parse("2026-11-30T09:00:00Z"))}.`);
    expect(readableTime(Date.parse("2026-11-30T09:00:00Z"))).toMatch(/^30 Nov 2026, \d\d:\d\d:00 \S+$/);

    clock.set(T0 + 7 * DAY_MS);
    for (const method of ["GET", "POST"] as const) {
      const page = await open(r, link, method);
      expect(page.status).toBe(410);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.html).toContain("Acknowledge link expired");
      expect(page.html).toContain("Nothing was acknowledged.");
    }
    expect((await r.notification(id)).acknowledged_at).toBeNull();
    expect(await acknowledgements(r, id)).toHaveLength(0);
  });

  it("keeps the signing key in a 0600 file in the data dir, so links survive a restart", async () => {
    const r = await emailRig();
    const id = await r.send(await r.recipient());
    const link = linkIn((await r.peer.next()).text);
    expect(statSync(`${r.gw.dataDir}/ack-link.key`).mode & 0o777).toBe(0o600);
    await r.gw.restart();
    expect((await open(r, link, "POST")).html).toContain("Acknowledged 1 alert");
    expect((await r.notification(id)).status).toBe("acknowledged");
  });
});
