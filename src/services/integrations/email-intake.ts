import type {InboundMail} from "../../domain/inbound-mail.js";
import type {RegexMatcher} from "../../domain/integration-rules.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import {AppError} from "../shared/errors.js";
import type {DeviceIntake, DeviceMessage, IntakeOutcome} from "./intake/device-intake.js";
import {genericEventActions, textRuleActions, type InboundAction} from "./intake/integration-payloads.js";
import {emailAddressToken} from "./integration-credentials.js";

/** What the mail's sender is told. */
export type MailAnswer = {accepted: true} | {accepted: false; temporary: boolean; reason: string};

/** What email integrations work with. */
export interface EmailIntakeDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  /** The domain of the integrations' addresses (inbound_email.domain, else the box's name). */
  domain: () => string;
  matcher: RegexMatcher;
}

const TITLE_MAX = 200;

/**
 * Email integrations: which addresses are theirs, and what a mail to one of them does. A body
 * that is a generic event (JSON) is that event; any other mail goes through the integration's
 * rules on sender, subject and body, and one that matches none is kept in its log.
 */
export class EmailIntake {
  constructor(private readonly deps: EmailIntakeDeps) {}

  /** The email integration an address names: `<token>@<domain>`, case ignored; null for any other. */
  integrationFor(address: string): IntegrationRecord | null {
    const at = address.lastIndexOf("@");
    if (at < 0 || address.slice(at + 1).toLowerCase() !== this.deps.domain().toLowerCase()) return null;
    const token = address.slice(0, at).toLowerCase();
    return (
      this.deps.integrations
        .all()
        .find((integration) => integration.kind === "email" && emailAddressToken(integration) === token) ?? null
    );
  }

  accepts(address: string): boolean {
    return this.integrationFor(address) !== null;
  }

  /**
   * Hands a mail to each integration it was sent to; resolves once committed. Any refusal for
   * now (a sender over its rate) asks for the whole mail again later: what was taken merges.
   */
  async deliver(mail: InboundMail): Promise<MailAnswer> {
    const outcomes: IntakeOutcome[] = [];
    for (const address of new Set(mail.recipients)) {
      const integration = this.integrationFor(address);
      // Deleted since RCPT TO: as if the address had been refused then.
      if (integration) outcomes.push(await this.take(integration, mail));
    }
    const refusals = outcomes.filter((outcome) => outcome.status === "refused");
    const retry = refusals.find((outcome) => outcome.temporary);
    if (retry) return {accepted: false, temporary: true, reason: retry.reason};
    if (refusals.length && refusals.length === outcomes.length)
      return {accepted: false, temporary: false, reason: refusals[0].reason};
    return {accepted: true};
  }

  /** A mail that could not be taken at all: counted and kept under each integration it names. */
  refuse(envelope: {sender: string; recipients: string[]}, size: number, reason: string, excerpt: string): void {
    const message: DeviceMessage = {
      transport: "email",
      origin: envelope.sender || "(no sender)",
      summary: "(not read)",
      body: excerpt,
      size
    };
    const integrations = envelope.recipients.map((address) => this.integrationFor(address));
    for (const integration of integrations.length ? integrations : [null])
      this.deps.intake.refuse(integration, message, reason);
  }

  private async take(integration: IntegrationRecord, mail: InboundMail): Promise<IntakeOutcome> {
    const message: DeviceMessage = {
      transport: "email",
      origin: mail.sender || mail.remoteAddress,
      summary: mail.subject || "(no subject)",
      body: mail.text,
      size: mail.size,
      rateKey: mail.remoteAddress
    };
    let mapped: {actions: InboundAction[]; note: string | null};
    try {
      mapped = this.map(integration, mail);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.deps.intake.refuse(integration, message, error.message);
      return {status: "refused", reason: error.message, temporary: false};
    }
    return this.deps.intake.take(integration, message, mapped.actions, mapped.note);
  }

  private map(integration: IntegrationRecord, mail: InboundMail): {actions: InboundAction[]; note: string | null} {
    const generic = mail.text.startsWith("{") ? genericEventActions(parseJson(mail.text), integration) : null;
    if (generic) return {actions: generic, note: null};
    const title = (mail.subject || mail.text.split("\n", 1)[0] || `Mail from ${mail.sender}`).slice(0, TITLE_MAX);
    const {actions, timedOut} = textRuleActions(
      integration,
      {fields: {sender: mail.sender, subject: mail.subject, body: mail.text}, title, text: mail.text},
      this.deps.matcher
    );
    const note = timedOut.length
      ? `the regex of rule ${timedOut.map((index) => index + 1).join(", ")} ran out of time`
      : null;
    return {actions, note};
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
