import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {maskContact} from "../../domain/recipient.js";
import type {Journal} from "../../store/journal/journal.js";
import type {SmsReplyCodesRepository} from "../../store/journal/sms-reply-codes.repository.js";
import type {PhoneOwner, RemoteControlPort} from "../channel.js";
import {phoneOwnerOf} from "../remote-control.js";
import {candidateCode} from "./reply-code-candidates.js";
import {sameLine} from "../../lib/phone-number.js";
import {splitPin, WrongGuesses} from "./sms-guard.js";
import {
  changeReply,
  headline,
  HELP_REPLY,
  NOT_UNDERSTOOD_REPLY,
  PIN_REPLY,
  parseSmsCommand,
  statusReply,
  unknownCodeReply,
  type SmsCommand
} from "./sms-commands.js";

/** One incoming SMS as the driver hands it on: who sent it and the whole (reassembled) text. */
export interface IncomingSms {
  sender: string;
  text: string;
}

/** What came of an incoming SMS: the reply to send back, and a few words for /readyz and the log. */
export interface SmsAnswer {
  reply: string | null;
  outcome: string;
}

// An auto-responder ("I'm driving") answering every reply would make a loop: one "not understood"
// per phone in this time is enough.
const NOT_UNDERSTOOD_QUIET_MS = 10 * 60_000;

/** What SmsCommandHandler works with, by name. */
export interface SmsCommandHandlerDeps {
  remote: RemoteControlPort;
  journal: Journal;
  codes: SmsReplyCodesRepository;
  replyCodeTtlMs: number;
  clock: Clock;
  logger: Logger;
}

/**
 * Interprets SMS from known phones as commands (ACK, RES, STATUS, HELP; "1 <code>"), acts as the
 * recipient through the remote-control port, and says what to answer. A stranger's message gets
 * no answer at all (null), so the gateway's number tells an outsider nothing; nor does a phone
 * that sent too many wrong codes or PINs lately. A recipient with a `command_pin` ends every
 * command but HELP with it ("ACK 4821 1234").
 */
export class SmsCommandHandler {
  private readonly notUnderstoodAt = new Map<string, number>();
  private readonly wrongGuesses = new WrongGuesses();

  constructor(private readonly deps: SmsCommandHandlerDeps) {}

  async interpret(message: IncomingSms): Promise<SmsAnswer | null> {
    const from = maskContact(message.sender || "unknown");
    const person = phoneOwnerOf(this.deps.remote, message.sender);
    if (!person) {
      this.deps.logger.info("sms: message from a number that is no recipient's; no answer", {from});
      return null;
    }
    if (this.wrongGuesses.blocked(person.phone, this.deps.clock.now())) {
      this.deps.logger.warn("sms: too many wrong codes or PINs from this phone in 10 minutes; ignored, no answer", {
        from
      });
      return null;
    }
    const {command: text, pin} = person.hasPin ? splitPin(message.text) : {command: message.text, pin: null};
    const command = parseSmsCommand(text);
    if (!command) return this.notUnderstood(person);
    const answer =
      person.hasPin && command.kind !== "help" && !(pin !== null && (await this.deps.remote.checkPin(person, pin)))
        ? {reply: PIN_REPLY, outcome: "wrong or missing PIN"}
        : await this.run(command, person, message.sender);
    if (answer.outcome === "unknown code" || answer.outcome === "wrong or missing PIN")
      this.wrongGuesses.record(person.phone, this.deps.clock.now());
    this.deps.logger.info("sms: command", {from, command: command.kind, outcome: answer.outcome});
    return answer;
  }

  private async run(command: SmsCommand, person: PhoneOwner, sender: string): Promise<SmsAnswer> {
    switch (command.kind) {
      case "help":
        await this.deps.remote.record(person, "sms", "HELP");
        return {reply: HELP_REPLY, outcome: "help sent"};
      case "status":
        return this.status(person);
      case "ack":
        return command.code === null
          ? this.acknowledgeLatest(person)
          : this.byCode("ack", command.code, person, sender);
      case "resolve":
        return this.byCode("resolve", command.code, person, sender);
    }
  }

  private async status(person: PhoneOwner): Promise<SmsAnswer> {
    await this.deps.remote.record(person, "sms", "STATUS");
    return {reply: await this.statusText(person), outcome: "status sent"};
  }

  /** The STATUS list, with a code per alert this phone can use (one already sent is reused). */
  async statusText(person: PhoneOwner): Promise<string> {
    const alerts = this.deps.remote.openAlertsSentTo(person);
    const nowMs = this.deps.clock.now();
    const now = isoTimestamp(nowMs);
    const expires = isoTimestamp(nowMs + this.deps.replyCodeTtlMs);
    const codes = await this.deps.journal.write(() =>
      alerts.map(
        ({notification_id: id}) =>
          this.deps.codes.codeFor(person.phone, [id], now) ??
          this.deps.codes.issue(person.phone, [id], {nowIso: now, expiresIso: expires}, candidateCode)
      )
    );
    return statusReply(alerts.map((alert, index) => ({alert, code: codes[index]})));
  }

  private async acknowledgeLatest(person: PhoneOwner): Promise<SmsAnswer> {
    const [latest] = this.deps.remote.openAlertsSentTo(person, ["sms", "voice_call"]);
    if (!latest) {
      await this.deps.remote.record(person, "sms", "ACK");
      return {reply: "Klaxon: no open alert sent to you to acknowledge.", outcome: "nothing to acknowledge"};
    }
    const change = await this.deps.remote.acknowledge([latest.notification_id], person, "sms");
    // What STATUS would list next: open alerts sent on any channel.
    const others = this.deps.remote.openAlertsSentTo(person).length;
    const more = others > 0 ? ` ${others} more open: send STATUS.` : "";
    // Closed elsewhere between the list and the change: say so rather than claim it.
    if (change.changed.length === 0)
      return {reply: `Klaxon: ${headline(latest)} was already closed.${more}`, outcome: "latest alert already closed"};
    return {reply: `Klaxon: acknowledged ${headline(latest)}${more}`, outcome: "acknowledged the latest alert"};
  }

  private async byCode(kind: "ack" | "resolve", code: string, person: PhoneOwner, sender: string): Promise<SmsAnswer> {
    const entry = this.deps.journal.read(() => this.deps.codes.find(code, isoTimestamp(this.deps.clock.now())));
    // A code sent to another phone is as unknown here as an expired one: it says nothing about it.
    if (!entry || !sameLine(sender, entry.contact)) {
      if (entry)
        this.deps.logger.warn("sms: reply code from a number it was not sent to; ignored", {
          from: maskContact(sender),
          sent_to: maskContact(entry.contact)
        });
      await this.deps.remote.record(person, "sms", `${kind.toUpperCase()} ${code}`);
      return {reply: unknownCodeReply(code), outcome: "unknown code"};
    }
    const change =
      kind === "ack"
        ? await this.deps.remote.acknowledge(entry.notificationIds, person, "sms")
        : await this.deps.remote.resolve(entry.notificationIds, person);
    const verb = kind === "ack" ? "acknowledged" : "resolved";
    return {reply: changeReply(verb, code, change), outcome: `${verb} ${change.changed.length} alert(s)`};
  }

  private async notUnderstood(person: PhoneOwner): Promise<SmsAnswer> {
    await this.deps.remote.record(person, "sms", "not understood");
    const nowMs = this.deps.clock.now();
    const last = this.notUnderstoodAt.get(person.phone);
    if (last !== undefined && nowMs - last < NOT_UNDERSTOOD_QUIET_MS)
      return {reply: null, outcome: "not understood (answered recently)"};
    this.notUnderstoodAt.set(person.phone, nowMs);
    return {reply: NOT_UNDERSTOOD_REPLY, outcome: "not understood"};
  }
}
