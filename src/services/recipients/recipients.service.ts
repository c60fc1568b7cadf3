import {randomUUID} from "node:crypto";
import {
  contactFor,
  DEFAULT_CHANNEL_ORDER,
  DEFAULT_ESCALATION,
  DEFAULT_QUIET_ALLOW,
  isValidTimeZone,
  maskContact,
  missingContactReason,
  type Recipient
} from "../../domain/recipient.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import {ANY_BOX, gapPointer, priorityGaps} from "../../domain/plan-coverage.js";
import {CHANNELS, type Channel} from "../../domain/vocabulary.js";
import type {
  ContactVerificationsRepository,
  GroupsRepository,
  RecipientsRepository
} from "../../store/config/repositories.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {ContactFailuresRepository} from "../../store/journal/contact-failures.repository.js";
import {recipientActor, SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {checkPhoneNumber} from "../../lib/phone-number.js";
import {hashPassword} from "../../lib/password-hash.js";
import {refuseIfOpenNotifications, type PagingReferences} from "./paging-references.js";
import {
  AppError,
  invalid,
  notFound,
  pageOrInvalidCursor,
  priorityWithoutChannel,
  refuseReadOnlyFields,
  type FieldError
} from "../shared/errors.js";

/** The fields a client may write; everything else on a recipient is derived or read-only. */
export type RecipientInput = Partial<
  Pick<
    Recipient,
    "name" | "telegram_id" | "phone" | "email" | "channel_order" | "escalation" | "quiet_hours" | "routing_rules"
  >
> & {
  /** Write-only: set (4 to 8 digits), removed (null) or kept as it is (absent). Stored as a hash. */
  command_pin?: string | null;
};

const WRITABLE: (keyof RecipientInput & keyof Recipient)[] = [
  "name",
  "telegram_id",
  "phone",
  "email",
  "channel_order",
  "escalation",
  "quiet_hours",
  "routing_rules"
];

export interface RecipientView extends Omit<Recipient, "command_pin_hash"> {
  command_pin_set: boolean;
  /** `verified_at`: when the channel's current contact last passed a test page, or null (never). */
  channels: Array<{channel: Channel; available: boolean; reason: string | null; verified_at: string | null}>;
  /** Contacts a channel reported permanently unreachable (SMTP 550, Telegram 403), masked. */
  contact_failures: Array<{channel: Channel; contact: string; reason: string; at: string}>;
}

/** Business checks a JSON Schema cannot express. */
function checkRecipient(input: RecipientInput): FieldError[] {
  const errors: FieldError[] = [];
  if (!input.telegram_id && !input.phone && !input.email)
    errors.push({pointer: "", detail: "at least one of telegram_id, phone or email is required"});
  if (input.phone !== undefined && input.phone !== null) {
    const phone = checkPhoneNumber(input.phone);
    if (!phone.ok) errors.push({pointer: "/phone", detail: phone.detail});
  }
  if (input.command_pin !== undefined && input.command_pin !== null && !/^\d{4,8}$/.test(input.command_pin))
    errors.push({pointer: "/command_pin", detail: "must be 4 to 8 digits"});
  if (input.quiet_hours && !isValidTimeZone(input.quiet_hours.timezone))
    errors.push({pointer: "/quiet_hours/timezone", detail: `"${input.quiet_hours.timezone}" is not an IANA time zone`});
  if (input.quiet_hours && input.quiet_hours.start === input.quiet_hours.end)
    errors.push({pointer: "/quiet_hours/end", detail: "quiet hours must not start and end at the same time"});
  const escalation = escalationOf(input);
  if ((escalation.retry_after_failure_seconds ?? 0) > escalation.ack_timeout_seconds) {
    errors.push({
      pointer: "/escalation/retry_after_failure_seconds",
      detail: `must not exceed ack_timeout_seconds (${escalation.ack_timeout_seconds})`
    });
  }
  return errors;
}

/** The stored form of a phone number checkRecipient accepted: E.164, so "+49 151 1234 5678" and "+4915112345678" are one number. */
function e164(phone: string | null | undefined): string | null {
  if (phone === undefined || phone === null) return null;
  const checked = checkPhoneNumber(phone);
  return checked.ok ? checked.e164 : null;
}

/** The hash to store: a new PIN's, none when it is removed (null), the current one when absent. */
async function commandPinHash(pin: string | null | undefined, current: string | null): Promise<string | null> {
  if (pin === undefined) return current;
  return pin === null ? null : hashPassword(pin);
}

function escalationOf(input: RecipientInput): Recipient["escalation"] {
  return {...DEFAULT_ESCALATION, ...input.escalation};
}

function writableView(recipient: Recipient): RecipientInput {
  return Object.fromEntries(WRITABLE.map((field) => [field, recipient[field]]));
}

/** What RecipientsService works with, by name. */
export interface RecipientsDeps {
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  notifications: NotificationsRepository;
  channelStatus: ChannelStatusService;
  contactFailures: ContactFailuresRepository;
  audit: AuditService;
  clock: Clock;
  pagingReferences: PagingReferences;
  verifications: ContactVerificationsRepository;
}

/** Recipients: people with contact details and their own escalation preferences. */
export class RecipientsService {
  constructor(private readonly deps: RecipientsDeps) {}

  view(recipient: Recipient): RecipientView {
    const channels = CHANNELS.map((channel) => {
      const contactMissing = missingContactReason(recipient, channel);
      const gateway = this.deps.channelStatus.gatewayChannel(channel);
      const reason =
        contactMissing ??
        (recipient.channel_order.includes(channel) ? gateway.reason : "not in channel_order") ??
        this.deps.contactFailures.detailFor(recipient.uuid, channel, contactFor(recipient, channel));
      const verifiedAt = this.deps.verifications.verifiedAt(recipient.uuid, channel, contactFor(recipient, channel));
      return {channel, available: reason === null, reason, verified_at: verifiedAt};
    });
    // A failure recorded for an earlier address or number no longer applies: correcting the contact clears it.
    const contactFailures = this.deps.contactFailures
      .forRecipient(recipient.uuid)
      .filter((failure) => failure.contact === contactFor(recipient, failure.channel))
      .map((failure) => ({...failure, contact: maskContact(failure.contact)}));
    // The PIN is write-only: not even its hash leaves the box.
    const {command_pin_hash: pinHash, ...shown} = recipient;
    return {...shown, command_pin_set: !!pinHash, channels, contact_failures: contactFailures};
  }

  /**
   * Who acknowledged through a channel, for the audit log: the recipient whose address on that
   * channel is the first of `contacts` to match one, else the system (an address no recipient has).
   */
  actorFor(channel: Channel, contacts: string[]): Actor {
    const all = this.deps.recipients.all();
    for (const contact of contacts) {
      const recipient = all.find((candidate) => contactFor(candidate, channel) === contact);
      if (recipient) return recipientActor(recipient.uuid);
    }
    return SYSTEM_ACTOR;
  }

  get(uuid: string): Recipient {
    const recipient = this.deps.recipients.get(uuid);
    if (!recipient) throw notFound("recipient", uuid);
    return recipient;
  }

  list(limit: number, cursor: string | null): {items: Recipient[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.recipients.page(limit, cursor), "recipient");
  }

  private normalise(input: RecipientInput, uuid: string, createdAt: string, nowIso: string): Recipient {
    const errors = checkRecipient(input);
    if (errors.length) throw invalid(errors);
    const phone = e164(input.phone);
    const recipient: Recipient = {
      uuid,
      name: input.name ?? input.email ?? phone ?? `telegram ${input.telegram_id}`,
      telegram_id: input.telegram_id ?? null,
      phone,
      email: input.email ?? null,
      channel_order:
        input.channel_order ??
        DEFAULT_CHANNEL_ORDER.filter((channel) => !missingContactReason(input as Recipient, channel)),
      escalation: escalationOf(input),
      quiet_hours: input.quiet_hours
        ? {...input.quiet_hours, allow_priorities: input.quiet_hours.allow_priorities ?? DEFAULT_QUIET_ALLOW}
        : null,
      routing_rules: input.routing_rules ?? [],
      created_at: createdAt,
      updated_at: nowIso
    };
    // Judged on the recipient's own settings, not this box's channels: a channel the box lacks is
    // left out of plans and warned about (PlanWarning), not a reason to refuse the person.
    const gaps = priorityGaps(recipient, ANY_BOX);
    if (gaps.length)
      throw priorityWithoutChannel(
        gaps.map((gap) => ({pointer: gapPointer(recipient, gap.priority), detail: gap.reason}))
      );
    return recipient;
  }

  async create(input: RecipientInput, actor: Actor): Promise<Recipient> {
    const now = isoTimestamp(this.deps.clock.now());
    const recipient = this.normalise(input, randomUUID(), now, now);
    const pinHash = await commandPinHash(input.command_pin, null);
    if (pinHash) recipient.command_pin_hash = pinHash;
    await this.deps.recipients.insert(recipient);
    await this.deps.audit.record(
      actor,
      "recipient.created",
      {type: "recipient", id: recipient.uuid},
      {name: recipient.name}
    );
    return recipient;
  }

  /** The document a merge patch produces, for the caller to validate before `replace`. */
  patched(uuid: string, patch: Record<string, unknown>): RecipientInput {
    refuseReadOnlyFields(patch, [...WRITABLE, "command_pin"]);
    return applyMergePatch(writableView(this.get(uuid)), patch) as RecipientInput;
  }

  async replace(uuid: string, input: RecipientInput, actor: Actor): Promise<Recipient> {
    const current = this.get(uuid);
    const updated = this.normalise(input, uuid, current.created_at, isoTimestamp(this.deps.clock.now()));
    const pinHash = await commandPinHash(input.command_pin, current.command_pin_hash ?? null);
    if (pinHash) updated.command_pin_hash = pinHash;
    if (!(await this.deps.recipients.replace(updated))) throw notFound("recipient", uuid);
    const fields: string[] = WRITABLE.filter(
      (field) => JSON.stringify(current[field]) !== JSON.stringify(updated[field])
    );
    await this.deps.audit.record(
      actor,
      "recipient.updated",
      {type: "recipient", id: uuid},
      {fields: input.command_pin === undefined ? fields : [...fields, "command_pin"]}
    );
    return updated;
  }

  async remove(uuid: string, actor: Actor): Promise<void> {
    const recipient = this.get(uuid);
    const groups = this.deps.groups.containing(uuid);
    if (groups.length)
      throw new AppError(
        "in_use",
        `recipient ${uuid} is a member of group(s) ${groups.map((group) => `${group.name} (${group.uuid})`).join(", ")}`
      );
    this.deps.pagingReferences.refuseIfPaged("recipient", uuid);
    refuseIfOpenNotifications(this.deps.notifications, "recipient", uuid);
    await this.deps.recipients.remove(uuid);
    await this.deps.verifications.remove(uuid);
    await this.deps.audit.record(actor, "recipient.deleted", {type: "recipient", id: uuid}, {name: recipient.name});
  }
}
