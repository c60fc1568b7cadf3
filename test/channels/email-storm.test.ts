import {describe, expect, it} from "vitest";
import {emailRig, PUBLIC_URL, stopEmailRigs, type EmailRig} from "./email-rig.js";
import {ManualClock} from "../../src/lib/clock.js";

stopEmailRigs();

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
// As long as the API takes: about 7.9 KB of mail per alert in the old unbounded form.
const LONG_MESSAGE = `Line 3 PLC reports a fault. ${"Detail of the fault as the PLC words it. ".repeat(95)}`.slice(
  0,
  4000
);

/** A storm: `count` alerts to Maria accepted while the runner rests, then fired in one pass (one delivery). */
async function storm(r: EmailRig, clock: ManualClock, count: number): Promise<{maria: string; ids: string[]}> {
  const runner = r.gw.gateway.services.runner;
  await runner.stop();
  const maria = await r.recipient({escalation: {ack_timeout_seconds: 600, repeat: 0}});
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // A device sending at the API's sustained rate: the rate limiter's bucket refills on this clock.
    clock.advance(25);
    ids.push(
      await r.send(maria, {
        message: `${i}: ${LONG_MESSAGE}`,
        priority: i === 7 ? "critical" : "high",
        link: `https://scada.factory.lan/alarms/${i}`
      })
    );
  }
  await runner.tick();
  await runner.idle();
  return {maria, ids};
}

function attemptsOf(r: EmailRig): Array<{outcome: string; error: string | null}> {
  return r.gw.gateway.journal.db.prepare("SELECT outcome, error FROM attempts").all() as Array<{
    outcome: string;
    error: string | null;
  }>;
}

describe("email of an alert storm", () => {
  it(
    "mails a storm of 400 alerts (3.2 MB unbounded) to one person through a server with a 2 MB limit as one bounded mail",
    {timeout: 30_000},
    async () => {
      const clock = new ManualClock(T0);
      const r = await emailRig({gateway: {clock}, peer: {size: 2_000_000}});
      const {maria, ids} = await storm(r, clock, 400);

      expect(r.peer.messages).toHaveLength(1);
      const mail = r.peer.messages[0];
      expect(mail.raw.length).toBeLessThan(600_000);
      expect(mail.subject).toMatch(/^400 alerts for Maria: \[CRITICAL\] press-7: 7: Line 3 PLC/);
      // The first 50 listed (the critical one first), the rest counted with a link to them all.
      expect(mail.text).toContain(
        `and 350 more alerts: ${PUBLIC_URL}/dashboard/#/notifications?recipient_uuid=${maria}`
      );
      expect(mail.html).toContain("and 350 more alerts: see them all in the dashboard");
      const listed = mail.headers.get("x-klaxon-notifications")!.split(" ");
      expect(listed).toHaveLength(50);
      expect(listed).toContain(ids[7]);
      expect(mail.headers.get("x-klaxon-alert-count")).toBe("400");
      // A link for 400 alerts would be too long to open: it acknowledges the 50 listed.
      expect(mail.text).toContain("Acknowledge the 50 most urgent (this stops the escalation):");
      const link = /^(http\S+\/ack\/\S+)$/m.exec(mail.text!)![1];
      const page = await fetch(r.gw.url + link.slice(PUBLIC_URL.length));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("Acknowledge 50 alerts?");

      const attempts = attemptsOf(r);
      expect(attempts).toHaveLength(400);
      expect(attempts.every((attempt) => attempt.outcome === "delivered")).toBe(true);
      const statuses = r.gw.gateway.journal.db.prepare("SELECT DISTINCT status FROM notifications").pluck().all();
      expect(statuses).toEqual(["notifying"]);
    }
  );

  it(
    "sends the short form when the server answers 552 to the long one, and the step is carried",
    {timeout: 20_000},
    async () => {
      // The limit is not advertised: the refusal comes at the end of DATA, as from many relays.
      const clock = new ManualClock(T0);
      const r = await emailRig({gateway: {clock}, peer: {size: 40_000, hideSize: true}});
      const {maria} = await storm(r, clock, 60);

      expect(r.peer.refusedForSize).toBe(1);
      expect(r.peer.messages).toHaveLength(1);
      const mail = r.peer.messages[0];
      expect(mail.html).toBeNull();
      expect(mail.text).toContain("60 Klaxon alerts for Maria");
      expect(mail.text).toContain("[CRITICAL] press-7: 7: Line 3 PLC reports a fault.");
      expect(mail.text).toContain(
        `and 50 more alerts: ${PUBLIC_URL}/dashboard/#/notifications?recipient_uuid=${maria}`
      );
      expect(mail.text).toContain("Acknowledge all 60 (this stops the escalation):");
      // The short form lists 10: it says the link also acknowledges the 50 it does not show.
      expect(mail.text).toContain("The link also acknowledges the 50 alerts not listed here.");
      expect(mail.headers.get("x-klaxon-notifications")!.split(" ")).toHaveLength(10);

      const attempts = attemptsOf(r);
      expect(attempts.every((attempt) => attempt.outcome === "delivered")).toBe(true);
      expect(attempts[0].error).toMatch(/short form: the server refused the full mail for its size/);
      // A mail too big says nothing about the server: email stays available.
      expect((await r.emailState()).available).toBe(true);
    }
  );
});
