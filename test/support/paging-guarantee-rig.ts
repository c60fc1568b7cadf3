import {expect} from "vitest";
import type {Channel, Priority} from "../../src/domain/vocabulary.js";
import {parseExposition} from "../ops/exposition-parser.js";
import {eventually} from "./eventually.js";
import {ACK_TIMEOUT_SECONDS, startFaultRig, type FaultRig, type FaultRigOptions} from "./fault-rig.js";
import type {TestGateway} from "./gateway.js";
import {verifyDelivery} from "./webhook-receiver.js";

/** A webhook event as the receiver verified it. */
export interface ReceivedEvent {
  id: string;
  type: string;
  sequence: number;
  data: {
    notification: {id: string; status: string};
    step?: {number: number; targets: Array<{recipient_uuid: string; channel: string; target: string}>};
    attempt?: {channel: string; outcome: string};
  };
}

/**
 * A fault rig (production drivers, real SMTP server, modem simulator, Telegram stand-in, manual
 * clock) seen the way a user and a monitor see the gateway: over HTTP only, plus the clock.
 */
export interface GuaranteeRig extends FaultRig {
  /** A recipient with every contact, paged on `channels`, ack timeout 15 s, no repeat unless `fields` says otherwise. */
  person(name: string, channels: Channel[], fields?: Record<string, unknown>): Promise<string>;
  /** Sends an alert and returns its id (202 expected). */
  alert(target: string, message: string, priority: Priority, extra?: Record<string, unknown>): Promise<string>;
  /** Moves the clock to `ms`, fires what is due and waits until every delivery has ended. */
  at(ms: number): Promise<void>;
  /** The ATD commands the modem simulator received, as the numbers dialled. */
  dialled(): string[];
  /** What the simulated phones were told, one entry per TTS command. */
  spoken(): string[];
  /** Every event of one notification the webhook receiver got, verified, in arrival order. */
  events(id: string): Promise<ReceivedEvent[]>;
}

export async function startGuaranteeRig(options: FaultRigOptions = {}): Promise<GuaranteeRig> {
  const rig = await startFaultRig(options);
  const extra: Omit<GuaranteeRig, keyof FaultRig> = {
    async person(name, channels, fields = {}) {
      const {escalation, ...rest} = fields as {escalation?: Record<string, unknown>};
      const answer = await rig.gw.call("POST", "/api/v1/recipients", {
        body: {
          name,
          ...rig.contacts(name),
          channel_order: channels,
          escalation: {ack_timeout_seconds: ACK_TIMEOUT_SECONDS, repeat: 0, ...escalation},
          ...rest
        }
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.uuid;
    },
    async alert(target, message, priority, more = {}) {
      const answer = await rig.gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: target, message, priority, source: "press-7", ...more}
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      await rig.gw.gateway.services.runner.idle();
      return answer.body.notification_uuid;
    },
    async at(ms) {
      rig.clock.set(ms);
      await rig.gw.gateway.services.runner.tick();
      await rig.gw.gateway.services.runner.idle();
    },
    dialled: () =>
      (rig.modem?.received ?? [])
        .filter((command) => command.startsWith("ATD"))
        .map((command) => command.slice(3).replace(/;$/, "")),
    spoken: () => (rig.modem?.received ?? []).filter((command) => command.startsWith("AT+CTTS=2,")),
    async events(id) {
      await rig.gw.gateway.services.runner.idle();
      // Every event the journal holds for this notification has reached the receiver.
      const stored = () =>
        (
          rig.gw.gateway.journal.db
            .prepare("SELECT id FROM events WHERE notification_id = ?")
            .pluck()
            .all(id) as string[]
        ).sort();
      const received = () =>
        rig.receiver.received
          .map((delivery) => verifyDelivery(delivery, rig.webhook.secret) as ReceivedEvent)
          .filter((event) => event.data.notification.id === id);
      const all = await eventually(
        `the events of ${id}`,
        received,
        (events) => JSON.stringify(events.map((event) => event.id).sort()) === JSON.stringify(stored())
      );
      return all;
    }
  };
  return Object.assign(rig, extra);
}

/** /readyz as a monitor with a key reads it: the status code and the detailed body. */
export async function readyz(gw: TestGateway): Promise<{status: number; body: any}> {
  const answer = await gw.call("GET", "/readyz");
  return {status: answer.status, body: answer.body};
}

/** One sample of /metrics, read over HTTP. */
export async function metric(
  gw: TestGateway,
  name: string,
  labels?: Record<string, string>
): Promise<number | undefined> {
  const answer = await fetch(`${gw.url}/metrics`);
  return parseExposition(await answer.text()).value(name, labels);
}

/** The gateway's log records at `level` whose message starts with `prefix`. */
export function logged(gw: TestGateway, level: string, prefix: string): Array<Record<string, any>> {
  return gw.logLines
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((record) => record.level === level && String(record.msg).startsWith(prefix));
}

/** A notification's attempts as [recipient, channel, outcome], in order. */
export const attemptsOf = (n: any): Array<[string, string, string]> =>
  n.attempts.map((attempt: {recipient_uuid: string; channel: string; outcome: string}) => [
    attempt.recipient_uuid,
    attempt.channel,
    attempt.outcome
  ]);

/** HH:MM on the wall clock of `timezone` at `ms`. */
export function wallTime(ms: number, timezone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: timezone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }).format(ms);
}
