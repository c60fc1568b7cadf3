import {afterAll, afterEach, describe, expect, it} from "vitest";
import {readdirSync, readFileSync, statSync} from "node:fs";
import {join} from "node:path";
import {endOrphanedLitestreams} from "../support/litestream.js";
import {eventually} from "../support/eventually.js";
import {call, health, launchBox, planBox, powerCut, stopBoxes, urlOf, type BoxPlan} from "../support/two-boxes.js";

afterAll(endOrphanedLitestreams);
afterEach(stopBoxes);

interface Person {
  email: string;
  phone: string;
}
// The self-monitoring recipient, who gets the takeover page, and the person a running escalation pages.
const ADMIN: Person = {email: "admin@plant.lan", phone: "+4915112345679"};
const LEAD: Person = {email: "lead@plant.lan", phone: "+4915112345678"};

/** The texts that reached `person` through a box's own channels: mails to their address, SMS to their number. */
function pagesTo(box: BoxPlan, person: Person): string[] {
  return [
    ...box.smtp.messages.filter((mail) => mail.envelope.to.includes(person.email)).map((mail) => mail.text ?? ""),
    ...box.modem.sent.filter((sms) => sms.number === person.phone).map((sms) => sms.text)
  ];
}

const mentioning = (pages: string[], text: string) => pages.filter((page) => page.includes(text));

/** Everything a box's channels carried so far: mails accepted and SMS sent. */
const carried = (box: BoxPlan) => box.smtp.messages.length + box.modem.sent.length;

/** Quiet hours around now: the load's alerts are deferred (policy, not a fault), so the load pages nobody. */
function quietAroundNow() {
  const hour = new Date().getUTCHours();
  const at = (offset: number) => `${String((hour + offset + 24) % 24).padStart(2, "0")}:00`;
  return {start: at(-1), end: at(2), timezone: "UTC"};
}

describe("two boxes: the standby takes over from a killed active", () => {
  it(
    "serves and pages within the recovery time, loses at most the recovery point, and the old active comes back as the standby",
    {timeout: 300_000},
    async () => {
      const base = 20_000 + Math.floor(Math.random() * 20_000);
      const a = await planBox("klaxon-a", "127.0.0.2", base);
      const b = await planBox("klaxon-b", "127.0.0.3", base + 1);

      const first = launchBox(a, b, "active");
      await first.serving;
      const key = readFileSync(join(a.dataDir, "initial-admin-key"), "utf8").trim();
      const recipient = async (fields: Record<string, unknown>) => {
        const created = await call(a, key, "POST", "/api/v1/recipients", fields);
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        return created.body.uuid as string;
      };
      // Mail first, an SMS 15 s later (the shortest ack timeout): each person is paged through both channels.
      const admin = await recipient({
        name: "Site admin",
        ...ADMIN,
        channel_order: ["email", "sms"],
        escalation: {ack_timeout_seconds: 15, repeat: 0}
      });
      // A policy that runs longer than the test: six passes of mail and SMS, 15 s apart.
      const lead = await recipient({
        name: "Shift lead",
        ...LEAD,
        channel_order: ["email", "sms"],
        escalation: {ack_timeout_seconds: 15, repeat: 5}
      });
      const operator = await recipient({
        name: "Operator",
        email: "op@plant.lan",
        channel_order: ["email"],
        quiet_hours: quietAroundNow()
      });

      // Under npm start's umask: the copy it follows holds every secret, and must be private all the same.
      const launchB = () => launchBox(b, a, "standby", {KLAXON_SELF_MONITORING_RECIPIENT: admin}, {umask: "022"});
      const standby = launchB();
      await eventually(
        "b stands by with a copy",
        () => health(b),
        (answer) => answer?.role === "standby" && answer.epoch === 1,
        60_000
      );
      expect((statSync(join(b.dataDir, "journal.sqlite")).mode & 0o777).toString(8)).toBe("600");
      const refused = await call(b, key, "POST", "/api/v1/notifications/send", {
        recipient_uuid: operator,
        message: "x",
        priority: "high"
      });
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe("standby");
      expect(refused.headers.get("link")).toBe(`<${urlOf(a)}>; rel="active"`);
      expect(refused.headers.get("retry-after")).toBe("5");

      // Three alerts to the lead, each paged by a's mail first: one acknowledged, one resolved, one left running.
      const paged = async (message: string) => {
        const sent = await call(a, key, "POST", "/api/v1/notifications/send", {
          recipient_uuid: lead,
          message,
          priority: "high"
        });
        expect(sent.status, JSON.stringify(sent.body)).toBe(202);
        await eventually(
          `a mails "${message}"`,
          () => mentioning(pagesTo(a, LEAD), message),
          (pages) => pages.length === 1
        );
        return sent.body.notification_uuid as string;
      };
      const acknowledged = await paged("Boiler flame out");
      expect((await call(a, key, "POST", `/api/v1/notifications/${acknowledged}/ack`, {by: "maria"})).status).toBe(200);
      const resolved = await paged("Feed pump tripped");
      expect((await call(a, key, "POST", `/api/v1/notifications/${resolved}/resolve`)).status).toBe(200);
      const running = await paged("Tank 3 level low");

      // The active sees its standby keep up: the lag the standby reports, on the active's /readyz.
      const seen = await eventually(
        "the standby's lag on the active",
        async () => (await call(a, key, "GET", "/readyz")).body.replication.standby,
        (standby) => standby.lag_seconds !== null && standby.silent_seconds < 2,
        30_000
      );
      expect(seen.lag_seconds).toBeLessThan(5);

      // A steady load of sends, each with its Idempotency-Key, until the active dies.
      const accepted = new Map<string, {id: string; at: number}>();
      const attempted: string[] = [];
      let load = true;
      // Four senders, each sending again as soon as it has its answer.
      const sender = async (who: number) => {
        for (let n = 0; load; n++) {
          const idempotencyKey = `load-${who}-${n}`;
          attempted.push(idempotencyKey);
          try {
            const answer = await call(
              a,
              key,
              "POST",
              "/api/v1/notifications/send",
              {recipient_uuid: operator, message: `Alarm ${who}-${n}`, priority: "high"},
              {"Idempotency-Key": idempotencyKey}
            );
            if (answer.status === 202)
              accepted.set(idempotencyKey, {id: answer.body.notification_uuid, at: Date.now()});
          } catch {
            // the active is gone
          }
        }
      };
      const loadStartedAt = Date.now();
      const sending = Promise.all([0, 1, 2, 3].map(sender));
      await eventually(
        "load under way",
        () => accepted.size,
        (count) => count >= 300,
        60_000
      );
      // A power cut: the gateway and its Litestream die together, so nothing ships the last commits.
      const killedAt = Date.now();
      await powerCut(first);
      load = false;
      await sending;

      const served = await eventually(
        "b serves as the active",
        () => health(b),
        (answer) => answer?.role === "active" && answer.epoch !== null,
        120_000
      );
      const recoverySeconds = (Date.now() - killedAt) / 1000;
      expect(served!.epoch).toBe(2);
      // The takeover page reaches the admin through b's own mail; a, dead, carries none of it.
      const tookOver = "klaxon-b took over from klaxon-a";
      await eventually(
        "the takeover page in b's mail",
        () => b.smtp.messages.filter((mail) => mail.envelope.to.includes(ADMIN.email)),
        (mails) => mails.some((mail) => mail.text?.includes(tookOver)),
        30_000
      );

      // The recovery point: alerts the old active answered 202 that the new one does not have.
      const missing: {key: string; at: number}[] = [];
      for (const [idempotencyKey, {id, at}] of accepted)
        if ((await call(b, key, "GET", `/api/v1/notifications/${id}`)).status === 404)
          missing.push({key: idempotencyKey, at});
      const lostSeconds = missing.length ? (killedAt - Math.min(...missing.map((lost) => lost.at))) / 1000 : 0;
      const atRiskInLastSecond = [...accepted.values()].filter(({at}) => at >= killedAt - 1000).length;
      console.log(
        JSON.stringify({
          recovery_seconds: recoverySeconds,
          accepted: accepted.size,
          missing: missing.length,
          accepted_in_last_second: atRiskInLastSecond,
          recovery_point_seconds: lostSeconds,
          sends_per_second: Math.round(accepted.size / ((killedAt - loadStartedAt) / 1000))
        })
      );
      expect(lostSeconds).toBeLessThanOrEqual(1);

      // The new active loses its power too, and the old box returns while it is down: it finds the
      // newer epoch, keeps its own journal aside and stands by, holding the tail it cannot hand over.
      await powerCut(standby);
      const heardOnA = {mails: a.smtp.messages.length, commands: a.modem.received.length};
      const returned = launchBox(a, b, "active", {KLAXON_SELF_MONITORING_RECIPIENT: admin});
      await eventually(
        "a comes back as the standby",
        () => health(a),
        (answer) => answer?.role === "standby",
        60_000
      );
      // It never serves the tail itself, however long the active stays away (less than a takeover's 30 s here).
      const outage = Date.now();
      while (Date.now() - outage < 6000) {
        const refusedByA = await call(a, key, "POST", "/api/v1/notifications/send", {
          recipient_uuid: operator,
          message: "while b is down",
          priority: "high"
        });
        expect(refusedByA.body.code).toBe("standby");
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      for (const {key: idempotencyKey} of missing)
        expect((await call(a, key, "GET", `/api/v1/notifications/${accepted.get(idempotencyKey)!.id}`)).status).toBe(
          503
        );

      // The new active comes back (its own journal, so as the active); the tail comes home to it.
      launchB();
      await eventually(
        "b serves again",
        () => health(b),
        (answer) => answer?.role === "active" && answer.epoch === 2,
        60_000
      );
      const recovered = missing.map(({key: idempotencyKey}) => accepted.get(idempotencyKey)!.id);
      const onB = async (id: string) => (await call(b, key, "GET", `/api/v1/notifications/${id}`)).body;
      for (const id of recovered)
        await eventually(
          `${id} recovered on b`,
          () => onB(id),
          (view) => view?.id === id,
          30_000
        ).catch((error) => {
          // What the old box said of its hand-over, for whoever reads a failed run.
          console.log(returned.lines.filter((line) => line.includes("tail-hand-over")).join("\n"));
          throw error;
        });
      const backAt = Date.now();
      for (const id of recovered) {
        const view = await onB(id);
        // Kept under its id and acceptance time, marked, and paged as a new alert is (deferred: quiet hours).
        expect(view.recovered).toEqual([expect.objectContaining({change: "accepted", from_box: "klaxon-a"})]);
        await eventually(
          `${id} paged on b`,
          async () => (await onB(id)).attempts,
          (attempts) => attempts.length > 0,
          30_000
        );
      }
      // Every alert either box answered 2xx is on b exactly once.
      const messages: string[] = [];
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const page = await call(
          b,
          key,
          "GET",
          `/api/v1/notifications?recipient_uuid=${operator}&limit=100${cursor ? `&cursor=${cursor}` : ""}`
        );
        messages.push(...page.body.items.map((item: {message: string}) => item.message));
        cursor = page.body.next_cursor;
      }
      expect(messages.length).toBe(new Set(messages).size);
      for (const [idempotencyKey, {id}] of accepted) {
        expect((await onB(id)).message).toBe(`Alarm ${idempotencyKey.slice("load-".length)}`);
      }
      // The old box says what came home (alerts whose 2xx the kill cut off too: committed, never answered).
      const aside = readdirSync(a.dataDir).filter((name) => name.startsWith("former-journal-"));
      expect(aside).toHaveLength(1);
      const handedOver = await eventually(
        "a's note of the hand-over",
        () => {
          try {
            return JSON.parse(readFileSync(join(a.dataDir, aside[0], "handed-over.json"), "utf8"));
          } catch {
            return null;
          }
        },
        (note) => note !== null,
        30_000
      );
      expect(handedOver.refused).toEqual([]);
      expect(handedOver.recovered).toBeGreaterThanOrEqual(recovered.length);
      // The admin hears once how many came home, through b's mail.
      const cameHome = () =>
        b.smtp.messages.filter((mail) => mail.envelope.to.includes(ADMIN.email) && mail.text?.includes("came home"));
      if (handedOver.recovered)
        await eventually("the admin's mail about the tail", cameHome, (mails) => mails.length > 0, 30_000);
      console.log(
        JSON.stringify({
          recovered: handedOver.recovered,
          answered_2xx_and_recovered: recovered.length,
          tail_home_seconds: (backAt - outage) / 1000
        })
      );

      // Clients retry everything they sent with the same key: each alert lands exactly once.
      for (const idempotencyKey of attempted) {
        const n = idempotencyKey.slice("load-".length);
        const retry = await call(
          b,
          key,
          "POST",
          "/api/v1/notifications/send",
          {recipient_uuid: operator, message: `Alarm ${n}`, priority: "high"},
          {"Idempotency-Key": idempotencyKey}
        );
        expect(retry.status).toBe(202);
        // The recovered alerts too: their keys' answers came home with them.
        const before = accepted.get(idempotencyKey);
        if (before) expect(retry.body.notification_uuid).toBe(before.id);
        const again = await call(
          b,
          key,
          "POST",
          "/api/v1/notifications/send",
          {recipient_uuid: operator, message: `Alarm ${n}`, priority: "high"},
          {"Idempotency-Key": idempotencyKey}
        );
        expect(again.body.notification_uuid).toBe(retry.body.notification_uuid);
      }

      // The admin's policy goes on to its SMS step on b's modem; nothing of it ever reached a's channels.
      await eventually(
        "the takeover page by SMS from b's modem",
        () => b.modem.sent.filter((sms) => sms.number === ADMIN.phone),
        (sent) => sent.some((sms) => sms.text.includes(tookOver)),
        60_000
      );
      expect(mentioning(pagesTo(a, ADMIN), tookOver)).toEqual([]);

      // Running escalations go on from their stored state on the new active, through its channels.
      const stillRunning = [...accepted.values()][0].id;
      expect((await call(b, key, "GET", `/api/v1/notifications/${stillRunning}`)).body.status).toBe("notifying");
      await eventually(
        "b pages a later step of the running alert",
        () => mentioning(pagesTo(b, LEAD), "Tank 3 level low"),
        (pages) => pages.length > 0,
        30_000
      );
      const goingOn = (await call(b, key, "GET", `/api/v1/notifications/${running}`)).body;
      expect(goingOn.status).toBe("notifying");
      // b takes the chain up after the steps a carried: no step paged twice, none paged by b before a's last.
      // A step passed over for the moment (skipped) is tried again later: only carried steps count.
      const steps = (attempts: {step: number; started_at: string; outcome: string}[], byB: boolean) =>
        attempts
          .filter(({outcome}) => outcome !== "skipped" && outcome !== "deferred")
          .filter((attempt) => Date.parse(attempt.started_at) >= killedAt === byB)
          .map(({step}) => step);
      const [stepsOfA, stepsOfB] = [steps(goingOn.attempts, false), steps(goingOn.attempts, true)];
      expect(stepsOfA.length).toBeGreaterThan(0);
      expect(stepsOfB.length).toBeGreaterThan(0);
      expect(Math.min(...stepsOfB)).toBeGreaterThan(Math.max(...stepsOfA));
      expect(new Set([...stepsOfA, ...stepsOfB]).size).toBe(stepsOfA.length + stepsOfB.length);
      expect((await call(b, key, "GET", `/api/v1/notifications/${acknowledged}`)).body).toMatchObject({
        status: "acknowledged",
        acknowledged_by: "maria"
      });
      expect((await call(b, key, "GET", `/api/v1/notifications/${resolved}`)).body.status).toBe("resolved");

      expect((await health(b))?.role).toBe("active");
      // While it stands by, b goes on paging and a's channels hear nothing, not even an AT command.
      // The window lasts until b has carried another page and at least 5 s: a standby that paged
      // would do so at its start, when it resumes the escalations b is running.
      const standingBy = {at: Date.now(), carriedByB: carried(b)};
      await eventually(
        "b pages on while a stands by",
        () => ({pages: carried(b), seconds: (Date.now() - standingBy.at) / 1000}),
        ({pages, seconds}) => pages > standingBy.carriedByB && seconds >= 5,
        30_000
      );
      expect((await health(a))?.role).toBe("standby");
      expect({mails: a.smtp.messages.length, commands: a.modem.received.length}).toEqual(heardOnA);
      // Neither the acknowledged nor the resolved alert was paged again by the new active.
      expect(mentioning(pagesTo(b, LEAD), "Boiler flame out")).toEqual([]);
      expect(mentioning(pagesTo(b, LEAD), "Feed pump tripped")).toEqual([]);
      // Told once, with the whole count.
      expect(cameHome().map((mail) => mail.text)).toEqual(
        handedOver.recovered
          ? [expect.stringContaining(`${handedOver.recovered} change(s) that klaxon-a accepted`)]
          : []
      );
    }
  );
});
