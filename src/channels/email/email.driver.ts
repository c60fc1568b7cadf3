import type nodemailer from "nodemailer";
import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Settings} from "../../settings/defaults.js";
import {ChannelError, type ChannelDriver, type Delivery, type DeliveryResult} from "../channel.js";
import type {AckLinkSigner} from "../../lib/ack-link.js";
import {abortError} from "../../lib/abort-error.js";
import {recipientAlertsLink} from "../../lib/dashboard-link.js";
import {composeEmail, listedAlerts, type EmailContent, type EmailForm} from "./email-message.js";
import {classifySmtpFailure, type SmtpFailure} from "./smtp-failure.js";
import {SmtpServerMonitor} from "./smtp-server-monitor.js";

export interface EmailDriverParts {
  smtp: Settings["smtp"];
  /** settings.public_url: a storm's page links to the dashboard for the alerts it does not list. */
  publicUrl: string;
  ackLinks: AckLinkSigner;
  clock: Clock;
  logger: Logger;
}

type Transport = ReturnType<typeof createPooledTransport>;
/** What the server said: accepted (its reply and the message id), or why it refused. */
type SendResult = {accepted: {response: string; messageId: string}} | {refused: SmtpFailure};

// Far below Node's 16 KB request-header limit, which the link's request line must fit: a link for
// a bigger storm acknowledges the alerts the mail lists, and the dashboard holds the rest.
const MAX_ACK_URL_CHARS = 8000;

// One pool for every delivery. Drivers never retry (the escalation decides what happens next),
// so a message is not re-queued when its connection drops; and a mail is built from our own
// strings only, never from files or URLs.
function createPooledTransport(mailer: typeof nodemailer, smtp: Settings["smtp"], concurrency: number) {
  const timeoutMs = Math.max(1, smtp.timeout_seconds) * 1000;
  return mailer.createTransport({
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
  // Nodemailer (about 25 MB resident) is loaded with the first check or mail, so a gateway with
  // no email channel never loads it (the driver's module is imported by every gateway).
  private transport: Promise<Transport> | null = null;
  private readonly monitor: SmtpServerMonitor;

  constructor(private readonly parts: EmailDriverParts) {
    const {smtp, clock, logger} = parts;
    this.concurrency = Math.max(1, Math.floor(smtp.concurrency));
    this.monitor = new SmtpServerMonitor({
      verify: () => this.pooled().then((transport) => transport.verify()),
      describeFailure: (error) => classifySmtpFailure(error, smtp.password).reason,
      recheckMs: Math.max(1, smtp.check_seconds) * 1000,
      clock,
      logger: logger.child({channel: "email"})
    });
  }

  private pooled(): Promise<Transport> {
    this.transport ??= import("nodemailer").then(({default: mailer}) =>
      createPooledTransport(mailer, this.parts.smtp, this.concurrency)
    );
    return this.transport;
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
    (await this.transport)?.close();
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

  /**
   * The signed acknowledge link of the delivery's alerts (of those the mail lists, when a link
   * for all of them would be too long to open), or why there is none.
   */
  private ackFor(delivery: Delivery, ids: string[], listedIds: string[]): EmailContent["ack"] {
    const {ackLinks} = this.parts;
    const person = {uuid: delivery.recipient.uuid, name: delivery.recipient.name, email: delivery.contact};
    let link = ackLinks.linkFor(ids, person);
    let covers = ids.length;
    if (link && link.url.length > MAX_ACK_URL_CHARS) {
      link = ackLinks.linkFor(listedIds, person);
      covers = listedIds.length;
    }
    return link
      ? {url: link.url, validUntilMs: link.expiresAtMs, covers}
      : {url: null, missingBecause: ackLinks.disabledReason ?? "links are off"};
  }

  /**
   * One mail for the delivery, bounded however big the storm (MAX_LISTED_ALERTS alerts listed).
   * A server that refuses it for its size gets the short form at once: a page that does not fit
   * must still go out, and the step must not fail for the size of a mail.
   */
  async deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    if (signal.aborted) throw new ChannelError(`not sent: ${abortReason(signal)}`, false);
    const {logger} = this.parts;
    const ids = delivery.alerts.map((alert) => alert.notification_id);
    const listedIds = listedAlerts(delivery.alerts).map((alert) => alert.notification_id);
    const content: EmailContent = {
      recipientName: delivery.recipient.name,
      alerts: delivery.alerts,
      ack: delivery.testPage ? null : this.ackFor(delivery, ids, listedIds),
      moreLink: recipientAlertsLink(this.parts.publicUrl, delivery.recipient.uuid),
      timeZone: delivery.recipient.timeZone
    };
    let form: EmailForm = "long";
    let sent = await this.send(delivery, content, form, signal);
    if ("refused" in sent && sent.refused.tooBig) {
      logger.warn("email too big for the SMTP server: sending its short form", {
        channel: "email",
        alerts: ids.length,
        reason: sent.refused.reason
      });
      form = "short";
      sent = await this.send(delivery, content, form, signal);
    }
    if ("refused" in sent) {
      const failure = sent.refused;
      if (failure.serverFailing) this.monitor.failed(failure.reason);
      logger.warn("email not sent", {
        channel: "email",
        notifications: listedIds,
        alerts: ids.length,
        reason: failure.reason,
        permanent: failure.permanent
      });
      throw new ChannelError(failure.reason, failure.permanent);
    }
    this.monitor.succeeded();
    const {response, messageId} = sent.accepted;
    const shortened = form === "short" ? " (the short form: the server refused the full mail for its size)" : "";
    return {
      outcome: "delivered",
      detail: `accepted by the SMTP server: ${response.trim()} (message id ${messageId})${shortened}`
    };
  }

  /** Sends one form of the mail: the server's acceptance, or why it refused. Throws only when cut off. */
  private async send(
    delivery: Delivery,
    content: EmailContent,
    form: EmailForm,
    signal: AbortSignal
  ): Promise<SendResult> {
    const {smtp} = this.parts;
    const message = composeEmail(content, form);
    const listed = new Set(listedAlerts(content.alerts, form).map((alert) => alert.notification_id));
    const urgent = delivery.alerts.some((alert) => alert.priority === "critical" || alert.priority === "high");
    const sending = (await this.pooled()).sendMail({
      from: smtp.from,
      to: {name: delivery.recipient.name, address: delivery.contact},
      subject: message.subject,
      text: message.text,
      ...(message.html === null ? {} : {html: message.html}),
      priority: urgent ? "high" : "normal",
      headers: {
        // RFC 3834: out-of-office robots must not answer an alert.
        "Auto-Submitted": "auto-generated",
        // The ids of the alerts the mail lists (a storm's whole list would make the header the mail).
        "X-Klaxon-Notifications": delivery.alerts
          .filter((alert) => listed.has(alert.notification_id))
          .map((alert) => alert.notification_id)
          .join(" "),
        "X-Klaxon-Alert-Count": String(delivery.alerts.length)
      }
    });
    try {
      const info = await untilAborted(sending, signal);
      return {accepted: {response: info.response, messageId: info.messageId}};
    } catch (error) {
      if (signal.aborted) {
        // The mail may still leave: SMTP cannot take a message back once DATA has begun.
        void sending.catch(() => undefined);
        throw new ChannelError(`cut off: ${abortReason(signal)}`, false);
      }
      return {refused: classifySmtpFailure(error, smtp.password)};
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
