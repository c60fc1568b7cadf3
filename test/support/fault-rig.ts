import {expect} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import type {Channel} from "../../src/domain/vocabulary.js";
import {startTestGateway, type SettingsOverrides, type TestGateway} from "./gateway.js";
import {eventually} from "./eventually.js";
import {ModemSimulator, type Dialect, type SimulatorScript} from "./modem-simulator.js";
import {startSmtpPeer, type SmtpPeer} from "./smtp-peer.js";
import {startFakeBotApi, type FakeBotApi} from "./telegram-bot-api.js";
import {startWebhookReceiver, verifyDelivery, type WebhookReceiver} from "./webhook-receiver.js";

/** The shortest acknowledgement timeout a recipient may have: every step of a fault test waits this long. */
export const ACK_TIMEOUT_SECONDS = 15;
export const SMTP_PASSWORD = "Fault-Suite-Smtp-Pa55";
// Not shaped like a real token, so only our own care keeps it out of logs.
export const BOT_TOKEN = "5150:fault-suite-bot-token";

/** Which peers a rig starts besides the SMTP server and the webhook receiver, which every rig has. */
export interface FaultRigOptions {
  telegram?: boolean;
  modem?: {dialect: Dialect; script?: Partial<SimulatorScript>; settings?: SettingsOverrides["modem"]};
  /** Per-section settings on top of the rig's short timeouts. */
  smtp?: SettingsOverrides["smtp"];
  telegramSettings?: SettingsOverrides["telegram"];
}

/** One channel's entry on /readyz. */
export interface ChannelReadiness {
  channel: Channel;
  available: boolean;
  reason: string | null;
  details: Record<string, any> | null;
}

/**
 * A production-wired gateway (real drivers built from settings) on a manual clock, with every
 * peer it pages through on loopback and a webhook receiver subscribed to every event. The clock
 * moves only when a test moves it, so "the next step fires within its ack timeout" is checked
 * exactly, without waiting 15 real seconds; the drivers' own timeouts are real and short.
 */
export interface FaultRig {
  gw: TestGateway;
  clock: ManualClock;
  smtp: SmtpPeer;
  telegram: FakeBotApi | null;
  modem: ModemSimulator | null;
  receiver: WebhookReceiver;
  webhook: {id: string; secret: string};
  /** A recipient with every contact, paged on `channels` in that order, one step each, no repeat. */
  recipient(name: string, channels: Channel[]): Promise<string>;
  /** The contacts `recipient(name)` was given. */
  contacts(name: string): {email: string; phone: string; telegram_id: string};
  send(recipient: string, message: string): Promise<string>;
  /** The notification once every delivery under way has ended and been recorded. */
  notification(id: string): Promise<any>;
  channel(channel: Channel): Promise<ChannelReadiness>;
  /**
   * The step after the last attempt: checks it is due no later than the ack timeout after that
   * attempt started, moves the clock there and fires it. Returns the notification afterwards.
   */
  nextStep(id: string): Promise<any>;
  /** Every accepted alert is stored, audited, and every attempt finished with a reason when it did not go out. */
  expectNothingLost(ids: string[]): Promise<void>;
  /** Every event the journal holds reached the receiver exactly once, in order, signed. */
  expectEveryEventDeliveredOnce(): Promise<void>;
  stop(): Promise<void>;
}

const CONTACT_NUMBERS = new Map<string, number>();

function contactsOf(name: string): {email: string; phone: string; telegram_id: string} {
  if (!CONTACT_NUMBERS.has(name)) CONTACT_NUMBERS.set(name, CONTACT_NUMBERS.size + 1);
  const n = CONTACT_NUMBERS.get(name)!;
  return {
    email: `${name.toLowerCase()}@factory.lan`,
    phone: `+4915100000${String(n).padStart(3, "0")}`,
    telegram_id: String(4000 + n)
  };
}

const OK_OUTCOMES = new Set(["sent", "delivered", "answered", "no_answer", "busy"]);

export async function startFaultRig(options: FaultRigOptions = {}): Promise<FaultRig> {
  // Real time as the start, so the stock webhook verifier accepts the signatures' timestamps.
  const clock = new ManualClock(Date.now());
  const smtp = await startSmtpPeer({auth: {user: "klaxon", password: SMTP_PASSWORD}});
  const telegram = options.telegram ? await startFakeBotApi(BOT_TOKEN) : null;
  const modem = options.modem ? await ModemSimulator.start(options.modem.dialect, options.modem.script) : null;
  const receiver = await startWebhookReceiver(clock);
  const gw = await startTestGateway(
    {
      smtp: {
        host: "127.0.0.1",
        port: smtp.port,
        from: "Klaxon <klaxon@factory.lan>",
        user: "klaxon",
        password: SMTP_PASSWORD,
        timeout_seconds: 2,
        check_seconds: 1,
        ...options.smtp
      },
      ...(telegram && {
        telegram: {
          bot_token: BOT_TOKEN,
          api_url: telegram.url,
          poll_timeout_seconds: 1,
          probe_interval_seconds: 0.2,
          probe_max_backoff_seconds: 0.4,
          request_timeout_seconds: 2,
          max_retry_after_seconds: 2,
          ...options.telegramSettings
        }
      }),
      ...(modem && {
        modem: {
          port: modem.devicePath,
          profile: options.modem!.dialect,
          ring_timeout_seconds: 2,
          key_wait_seconds: 0.5,
          speech_repeats: 2,
          ...options.modem!.settings
        }
      })
    },
    {clock, drivers: "production"}
  );
  const hook = await gw.call("POST", "/api/v1/webhooks", {body: {url: receiver.url, events: ["*"]}});
  expect(hook.status).toBe(201);

  const ready = async () => (await gw.call("GET", "/readyz")).body;
  const channel = async (name: Channel): Promise<ChannelReadiness> =>
    (await ready()).channels.find((entry: ChannelReadiness) => entry.channel === name);
  const notification = async (id: string) => {
    await gw.gateway.services.runner.idle();
    const answer = await gw.call("GET", `/api/v1/notifications/${id}`);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  // Deterministic starts: the first SMTP check and the first Telegram probe have had their answers.
  await eventually(
    "the first SMTP check",
    () => channel("email"),
    (email) => email.details?.state !== "unknown"
  );
  if (telegram)
    await eventually(
      "the first Telegram probe",
      () => channel("telegram_voice"),
      (entry) => entry.details?.link?.state !== "unknown"
    );

  const rig: FaultRig = {
    gw,
    clock,
    smtp,
    telegram,
    modem,
    receiver,
    webhook: {id: hook.body.id, secret: hook.body.secret},
    async recipient(name, channels) {
      const answer = await gw.call("POST", "/api/v1/recipients", {
        body: {
          name,
          ...contactsOf(name),
          channel_order: channels,
          escalation: {ack_timeout_seconds: ACK_TIMEOUT_SECONDS, repeat: 0}
        }
      });
      expect(answer.status).toBe(201);
      return answer.body.uuid;
    },
    contacts: contactsOf,
    async send(recipient, message) {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message, priority: "critical", source: "press-7"}
      });
      expect(answer.status).toBe(202);
      return answer.body.notification_uuid;
    },
    notification,
    channel,
    async nextStep(id) {
      const before = await notification(id);
      const last = before.attempts.at(-1);
      const dueMs = Date.parse(before.escalation.next_step_at);
      expect(dueMs).toBeLessThanOrEqual(Date.parse(last.started_at) + ACK_TIMEOUT_SECONDS * 1000);
      clock.set(dueMs);
      await gw.gateway.services.runner.tick();
      return notification(id);
    },
    async expectNothingLost(ids) {
      await gw.gateway.services.runner.idle();
      const listed = await gw.call("GET", "/api/v1/notifications?limit=200");
      expect(listed.body.items.map((item: {id: string}) => item.id).sort()).toEqual([...ids].sort());
      const audited = await gw.call("GET", "/api/v1/audit?action=notification.accepted&limit=200");
      expect(audited.body.items.map((entry: {subject: {id: string}}) => entry.subject.id).sort()).toEqual(
        [...ids].sort()
      );
      for (const id of ids) {
        const n = await notification(id);
        for (const attempt of n.attempts) {
          expect(attempt.finished_at, `attempt of ${id} on ${attempt.channel}`).not.toBeNull();
          // Anything that did not reach the person says why.
          if (!OK_OUTCOMES.has(attempt.outcome))
            expect(attempt.error, `attempt of ${id} on ${attempt.channel}`).toMatch(/\S/);
        }
      }
    },
    async expectEveryEventDeliveredOnce() {
      await gw.gateway.services.runner.idle();
      const db = gw.gateway.journal.db;
      const rows = () =>
        db
          .prepare("SELECT event_id, status FROM outbox WHERE destination = ? ORDER BY seq")
          .all(hook.body.id) as Array<{event_id: string; status: string}>;
      await eventually("every queued event delivered", rows, (all) => all.every((row) => row.status === "delivered"));
      const events = (db.prepare("SELECT id FROM events ORDER BY id").all() as Array<{id: string}>).map(
        (row) => row.id
      );
      expect(events.length).toBeGreaterThan(0);
      expect(
        rows()
          .map((row) => row.event_id)
          .sort()
      ).toEqual(events);
      expect(receiver.received.map((delivery) => verifyDelivery(delivery, hook.body.secret).id)).toEqual(
        rows().map((row) => row.event_id)
      );
      expect((await ready()).outbox.pending).toBe(0);
    },
    async stop() {
      await gw.stop();
      await Promise.all([smtp.stop(), telegram?.close(), modem?.stop(), receiver.close()]);
      // The secrets were in play throughout: none may have reached a log line.
      for (const secret of [SMTP_PASSWORD, BOT_TOKEN, hook.body.secret])
        expect(gw.logLines.filter((line) => line.includes(secret))).toEqual([]);
    }
  };
  return rig;
}

/** A notification's attempts as [channel, outcome] pairs, in order. */
export const outcomes = (n: any): Array<[string, string]> =>
  n.attempts.map((attempt: {channel: string; outcome: string}) => [attempt.channel, attempt.outcome]);

/** For each mail the SMTP peer kept, the notification ids it names. */
export const mailedAlerts = (r: FaultRig) => r.smtp.messages.map((mail) => mail.headers.get("x-klaxon-notifications"));
