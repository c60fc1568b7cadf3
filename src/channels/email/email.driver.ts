import nodemailer from "nodemailer";
import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Settings} from "../../settings/defaults.js";
import {ChannelError, type ChannelDriver, type Delivery, type DeliveryResult} from "../channel.js";
import type {AckLinkSigner} from "../../lib/ack-link.js";
import {abortError} from "../../lib/abort-error.js";
import {composeEmail, type EmailContent} from "./email-message.js";
import {classifySmtpFailure} from "./smtp-failure.js";
import {SmtpServerMonitor} from "./smtp-server-monitor.js";

export interface EmailDriverParts {
  smtp: Settings["smtp"];
  ackLinks: AckLinkSigner;
  clock: Clock;
  logger: Logger;
}

type Transport = ReturnType<typeof createPooledTransport>;

// One pool for every delivery. Drivers never retry (the escalation decides what happens next),
// so a message is not re-queued when its connection drops; and a mail is built from our own
// strings only, never from files or URLs.
function createPooledTransport(smtp: Settings["smtp"], concurrency: number) {
  const timeoutMs = Math.max(1, smtp.timeout_seconds) * 1000;
  return nodemailer.createTransport({
    pool: true,
    host: smtp.host,
    port: smtp.port,
    // true: TLS from the first byte; false: STARTTLS whenever the server offers it.
    secure: smtp.secure,
    auth: smtp.user ? {user: smtp.user, pass: smtp.password} : undefined,
    maxConnections: concurrency,
    maxRequeues: 0,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false
  });
}

/**
 * Email over SMTP: one message per delivery naming every alert in it, plain text and HTML, with
 * a signed acknowledge link. The outcome is `delivered` once the server accepted the message (its
 * reply is the detail): that is the last confirmation SMTP gives, so nothing later will upgrade a
 * `sent`; whether it reached the inbox is beyond what SMTP can say.
 */
export class EmailDriver implements ChannelDriver {
  readonly channel = "email" as const;
  readonly concurrency: number;
  private readonly transport: Transport;
  private readonly monitor: SmtpServerMonitor;

  constructor(private readonly parts: EmailDriverParts) {
    const {smtp, clock, logger} = parts;
    this.concurrency = Math.max(1, Math.floor(smtp.concurrency));
    this.transport = createPooledTransport(smtp, this.concurrency);
    this.monitor = new SmtpServerMonitor(
      () => this.transport.verify(),
      (error) => classifySmtpFailure(error, smtp.password).reason,
      Math.max(1, smtp.check_seconds) * 1000,
      clock,
      logger.child({channel: "email"})
    );
  }

  unavailableReason(): string | null {
    const failing = this.monitor.failingReason;
    return failing ? `SMTP server ${this.parts.smtp.host}:${this.parts.smtp.port} is failing: ${failing}` : null;
  }

  start(): Promise<void> {
    this.monitor.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.monitor.stop();
    this.transport.close();
  }

  details(): Record<string, unknown> {
    const {host, port, secure, user} = this.parts.smtp;
    return {
      host,
      port,
      secure,
      login: user ? "yes" : "no",
      ...this.monitor.snapshot(),
      ack_links: this.parts.ackLinks.disabledReason ?? `on, valid ${this.parts.ackLinks.lifetimeDays} days`
    };
  }

  /** The signed acknowledge link of the delivery's alerts, or why there is none. */
  private ackFor(delivery: Delivery, ids: string[]): EmailContent["ack"] {
    const {ackLinks} = this.parts;
    const link = ackLinks.linkFor(ids, {
      uuid: delivery.recipient.uuid,
      name: delivery.recipient.name,
      email: delivery.contact
    });
    return link
      ? {url: link.url, validUntilMs: link.expiresAtMs}
      : {url: null, missingBecause: ackLinks.disabledReason ?? "links are off"};
  }

  async deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    if (signal.aborted) throw new ChannelError(`not sent: ${abortReason(signal)}`, false);
    const {smtp, logger} = this.parts;
    const ids = delivery.alerts.map((alert) => alert.notification_id);
    const ack = delivery.testPage ? null : this.ackFor(delivery, ids);
    const message = composeEmail({recipientName: delivery.recipient.name, alerts: delivery.alerts, ack});
    const urgent = delivery.alerts.some((alert) => alert.priority === "critical" || alert.priority === "high");
    const sending = this.transport.sendMail({
      from: smtp.from,
      to: {name: delivery.recipient.name, address: delivery.contact},
      subject: message.subject,
      text: message.text,
      html: message.html,
      priority: urgent ? "high" : "normal",
      // RFC 3834: out-of-office robots must not answer an alert.
      headers: {"Auto-Submitted": "auto-generated", "X-Klaxon-Notifications": ids.join(" ")}
    });
    try {
      const info = await untilAborted(sending, signal);
      this.monitor.succeeded();
      return {
        outcome: "delivered",
        detail: `accepted by the SMTP server: ${info.response.trim()} (message id ${info.messageId})`
      };
    } catch (error) {
      if (signal.aborted) {
        // The mail may still leave: SMTP cannot take a message back once DATA has begun.
        void sending.catch(() => undefined);
        throw new ChannelError(`cut off: ${abortReason(signal)}`, false);
      }
      const failure = classifySmtpFailure(error, smtp.password);
      if (failure.serverFailing) this.monitor.failed(failure.reason);
      logger.warn("email not sent", {
        channel: "email",
        notifications: ids,
        reason: failure.reason,
        permanent: failure.permanent
      });
      throw new ChannelError(failure.reason, failure.permanent);
    }
  }
}

function abortReason(signal: AbortSignal): string {
  return String((signal.reason as Error | undefined)?.message ?? signal.reason ?? "aborted");
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, {once: true});
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
