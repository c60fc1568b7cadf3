import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {maskContact} from "../../domain/recipient.js";
import {modemUnavailableReason} from "../../modem/availability.js";
import type {ModemState} from "../../modem/health.js";
import {ModemError, type Modem} from "../../modem/modem.js";
import type {SharedModem} from "../../modem/shared-modem.js";
import type {SmsDeliveryReport} from "../../modem/sms-status-reports.js";
import type {InboundSmsRepository} from "../../store/journal/inbound-sms.repository.js";
import type {Journal} from "../../store/journal/journal.js";
import type {SmsReplyCodesRepository} from "../../store/journal/sms-reply-codes.repository.js";
import {
  ChannelError,
  type ChannelDriver,
  type Delivery,
  type DeliveryResult,
  type LateConfirmation
} from "../channel.js";
import {confirmParts} from "./sms-confirmation.js";
import {candidateCode} from "./reply-code-candidates.js";
import type {SmsCommandHandler} from "./sms-command-handler.js";
import {SmsInbox, type InboundMessage} from "./sms-inbox.js";
import {composeSms, planConcatenatedSms, planSms} from "./sms-text.js";

export interface SmsOptions {
  /** Serial device, for the reasons shown when the port is not open. */
  path: string;
  /** How long a reply code keeps working. */
  replyCodeTtlMs: number;
  /** At most this many SMS per delivery; longer alert text is shortened. */
  maxParts: number;
}

/** What /readyz shows about the last SMS in each direction (numbers masked). */
interface LastSms {
  at: string;
  number: string;
  result: string;
}

/** What SmsDriver works with, by name. */
export interface SmsDriverDeps {
  shared: SharedModem;
  options: SmsOptions;
  journal: Journal;
  codes: SmsReplyCodesRepository;
  inbound: InboundSmsRepository;
  commands: SmsCommandHandler;
  clock: Clock;
  logger: Logger;
}

/**
 * SMS through the same modem as the calls (PDU mode where the modem takes it, else text mode),
 * with a reply code per delivery. Inbound messages (+CMTI, and whatever is stored on the SIM when
 * the modem becomes ready) go through the inbox: committed to the journal before they are deleted
 * from the SIM, reassembled, then handed to the command handler (ACK, RES, STATUS, HELP from a
 * known phone), whose answer goes out. A message is marked handled only once acted on, so an
 * acknowledgement that could not be committed is tried again at the next drain. Each part asks
 * for a status report where the modem passes them on; the outcome is then `sent` with a
 * confirmation that turns `delivered` or `failed` when the network reports back.
 */
export class SmsDriver implements ChannelDriver {
  readonly channel = "sms" as const;
  readonly concurrency = 1;
  private inbound: Promise<void> = Promise.resolve();
  private lastSent: LastSms | null = null;
  private lastReply: LastSms | null = null;
  // Ends the confirmations still waiting when the driver stops; a new one for every start.
  private running = new AbortController();
  private readonly inbox: SmsInbox;
  // Set when this start's own listener saw the modem become ready (and drained), so start does not drain again.
  private readySeen = false;
  private readonly onSms = (index: number) => this.handleInbound(() => this.inbox.arrived(index));
  private readonly onState = (state: ModemState) => {
    if (state !== "ready") return;
    this.readySeen = true;
    this.handleInbound(() => this.inbox.drain());
  };

  constructor(private readonly deps: SmsDriverDeps) {
    const {shared, journal, inbound, clock, logger} = deps;
    this.inbox = new SmsInbox({
      modem: shared.modem,
      journal,
      inbound,
      interpret: (message) => this.handle(message),
      clock,
      logger
    });
  }

  private get modem(): Modem {
    return this.deps.shared.modem;
  }

  async start(): Promise<void> {
    this.running = new AbortController();
    this.readySeen = false;
    this.modem.on("sms", this.onSms);
    this.modem.on("state", this.onState);
    await this.deps.shared.open();
    // Opened earlier by the voice channel: the "ready" that triggers a drain has already passed.
    if (this.modem.state === "ready" && !this.readySeen) this.handleInbound(() => this.inbox.drain());
  }

  async stop(): Promise<void> {
    this.running.abort();
    this.modem.off("sms", this.onSms);
    this.modem.off("state", this.onState);
    await this.inbound;
    await this.deps.shared.close();
  }

  unavailableReason(): string | null {
    return modemUnavailableReason(this.modem.health(), this.deps.options.path);
  }

  details(): Record<string, unknown> {
    return {...this.modem.health(), ...this.inbox.details(), last_sms: this.lastSent, last_reply: this.lastReply};
  }

  async deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    const unavailable = this.unavailableReason();
    if (unavailable) throw new ChannelError(unavailable, false);
    const nowMs = this.deps.clock.now();
    const ids = delivery.alerts.map((alert) => alert.notification_id);
    // Stored before sending: a reply can come back faster than this delivery returns.
    const code = await this.deps.journal.write(() =>
      this.deps.codes.issue(
        delivery.contact,
        ids,
        {nowIso: isoTimestamp(nowMs), expiresIso: isoTimestamp(nowMs + this.deps.options.replyCodeTtlMs)},
        candidateCode
      )
    );
    const message = composeSms(delivery.alerts, code);
    // PDU mode: one concatenated message; text mode: numbered SMS, each sent on its own.
    const texts = this.modem.smsConcatenates
      ? [planConcatenatedSms(message, this.deps.options.maxParts)]
      : planSms(message, this.deps.options.maxParts);
    const references: string[] = [];
    // Null once a part goes without a report: the message as a whole can then not be confirmed.
    let reports: Promise<SmsDeliveryReport | null>[] | null = [];
    try {
      for (const text of texts) {
        for (const {messageRef, report} of await this.modem.sendSms(delivery.contact, text, signal)) {
          references.push(messageRef === null ? "?" : String(messageRef));
          reports = report && reports ? [...reports, report] : null;
        }
      }
    } catch (error) {
      const sent = references.length ? ` after ${references.length} of ${texts.length} parts` : "";
      const failure = signal.aborted
        ? new ChannelError(
            `SMS cancelled${sent}: ${signal.reason instanceof Error ? signal.reason.message : "aborted"}`,
            false
          )
        : new ChannelError(
            `the modem did not send the SMS${sent}: ${(error as Error).message}`,
            error instanceof ModemError && error.code === "invalid_number"
          );
      this.lastSent = this.record(delivery.contact, failure.message);
      throw failure;
    }
    const detail = `accepted by the modem (message reference ${references.join(", ")}); reply code ${code}`;
    const sent = this.record(delivery.contact, detail);
    this.lastSent = sent;
    if (!reports) return {outcome: "sent", detail};
    return {
      outcome: "sent",
      detail,
      confirmation: confirmParts(reports, this.running.signal).then((late) =>
        this.confirmed(delivery.contact, sent, late, `message reference ${references.join(", ")}; reply code ${code}`)
      )
    };
  }

  // The report's words replace the attempt's detail, so they keep what identifies the message.
  private confirmed(
    contact: string,
    sent: LastSms,
    late: LateConfirmation | null,
    identity: string
  ): LateConfirmation | null {
    const to = maskContact(contact);
    if (!late) {
      this.deps.logger.info("sms: no status report within the limit, or the channel stopped; the SMS stays sent", {to});
      return null;
    }
    const confirmation = {outcome: late.outcome, detail: `${late.detail}; ${identity}`};
    this.deps.logger.info(`sms: ${late.outcome}`, {to, detail: confirmation.detail});
    // /readyz shows the network's later word, unless another SMS has gone out since.
    if (this.lastSent === sent) this.lastSent = this.record(contact, confirmation.detail);
    return confirmation;
  }

  private handleInbound(work: () => Promise<void>): void {
    this.inbound = this.inbound.then(work).catch((error: unknown) =>
      this.deps.logger.warn("sms: reading the SIM failed; what was not committed stays there for the next drain", {
        error: error as Error
      })
    );
  }

  // What the message asks is the command handler's business; the inbox has committed it to the
  // journal and deleted it from the SIM, and marks it handled once this returns.
  private async handle(message: InboundMessage): Promise<void> {
    const answer = await this.deps.commands.interpret(message);
    if (answer) this.lastReply = this.record(message.sender, answer.outcome);
    if (answer?.reply) await this.sendText(message.sender, answer.reply);
  }

  /**
   * Sends `text` as it is: an answer, not an alert (no reply code, no report awaited). A failure
   * is logged, not thrown: a reply that cannot go out is not worth acting on the command twice.
   */
  async sendText(number: string, text: string): Promise<void> {
    try {
      await this.modem.sendSms(number, text, this.running.signal);
    } catch (error) {
      this.deps.logger.warn("sms: the answer to a command could not be sent", {
        to: maskContact(number),
        error: error as Error
      });
    }
  }

  private record(number: string, result: string): LastSms {
    return {at: isoTimestamp(this.deps.clock.now()), number: maskContact(number), result};
  }
}
