import type {ChannelRegistry} from "../../channels/channel-registry.js";
import type {Delivery, DeliveryResult} from "../../channels/channel.js";
import type {Actor} from "../../domain/actor.js";
import {contactFor, maskContact, missingContactReason, type Recipient} from "../../domain/recipient.js";
import {CHANNELS, type Channel} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import type {ContactVerificationsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import {AppError, notFound} from "../shared/errors.js";
import {deliverDirect} from "./direct-delivery.js";

/** How one channel's test ended: the driver's outcome, or `unavailable` when nothing was sent. */
export interface TestPageResult {
  channel: Channel;
  /** The contact tested, masked; null when the recipient has none on this channel. */
  contact: string | null;
  outcome: DeliveryResult["outcome"] | "unavailable";
  /** The channel's own words, or why it could not be used (the reason /readyz gives). */
  detail: string | null;
  /** Set when this test verified the contact. */
  verified_at: string | null;
}

export interface TestPageDependencies {
  recipients: RecipientsRepository;
  verifications: ContactVerificationsRepository;
  registry: ChannelRegistry;
  channelStatus: ChannelStatusService;
  audit: AuditService;
  clock: Clock;
}

const SECONDS_BETWEEN_TESTS = 30;
/** How long a test may take before it is cut off and reported failed: a call rings for about a minute. */
const TIMEOUT_MS = 90_000;

// The outcomes that show the message reached the person, or got as far as the channel can tell:
// `sent` counts only when no confirmation was to come (an SMS without delivery reports), not when
// one was awaited and never came.
function verifies(result: DeliveryResult): boolean {
  return (
    result.outcome === "delivered" ||
    result.outcome === "answered" ||
    (result.outcome === "sent" && !result.confirmation)
  );
}

/**
 * Test pages: a clearly marked message sent straight through a channel's driver, outside any
 * alert and its escalation, so a person can check that a contact works. A test that arrives marks
 * the contact verified. One test per contact and channel every 30 s, whichever recipient names
 * it, so the button cannot be used to flood a person: 30 recipients sharing one address are one
 * test mail, not 30.
 */
export class TestPageService {
  /** When each channel and contact was last tested (`channel:contact`), for the 30 s limit. */
  private readonly lastTestMs = new Map<string, number>();

  constructor(private readonly deps: TestPageDependencies) {}

  /** `channel` "all" tests every channel the recipient has a contact for. */
  async send(recipientUuid: string, channel: Channel | "all", actor: Actor): Promise<TestPageResult[]> {
    const recipient = this.deps.recipients.get(recipientUuid);
    if (!recipient) throw notFound("recipient", recipientUuid);
    const channels =
      channel === "all" ? CHANNELS.filter((candidate) => contactFor(recipient, candidate) !== null) : [channel];
    const sendable = channels.filter((candidate) => this.unavailableReason(recipient, candidate) === null);
    this.spendTestSlots(recipient, sendable);
    const results = await Promise.all(channels.map((candidate) => this.test(recipient, candidate)));
    await this.deps.audit.record(
      actor,
      "recipient.test_page",
      {type: "recipient", id: recipient.uuid},
      {results: results.map(({channel: tested, outcome, detail}) => ({channel: tested, outcome, detail}))}
    );
    return results;
  }

  private unavailableReason(recipient: Recipient, channel: Channel): string | null {
    return missingContactReason(recipient, channel) ?? this.deps.channelStatus.gatewayChannel(channel).reason;
  }

  // All or nothing: a refused request spends no slot, so its other channels can be tried at once.
  private spendTestSlots(recipient: Recipient, channels: Channel[]): void {
    const now = this.deps.clock.now();
    const key = (channel: Channel) => `${channel}:${contactFor(recipient, channel)}`;
    // Only tests within the window matter, so older ones are forgotten and the map stays small.
    for (const [tested, at] of this.lastTestMs)
      if (now - at >= SECONDS_BETWEEN_TESTS * 1000) this.lastTestMs.delete(tested);
    const refused = channels.filter((channel) => this.lastTestMs.has(key(channel)));
    if (refused.length) {
      const lastMs = Math.max(...refused.map((channel) => this.lastTestMs.get(key(channel)) ?? now));
      const waitSeconds = Math.ceil((lastMs + SECONDS_BETWEEN_TESTS * 1000 - now) / 1000);
      throw new AppError(
        "rate_limited",
        `${refused.map((channel) => `${channel} ${maskContact(contactFor(recipient, channel) ?? "")}`).join(", ")} of ${recipient.name} had a test page less than ${SECONDS_BETWEEN_TESTS} s ago (tests are limited per contact); try again in ${waitSeconds} s`,
        {retryAfterSeconds: waitSeconds}
      );
    }
    for (const channel of channels) this.lastTestMs.set(key(channel), now);
  }

  private async test(recipient: Recipient, channel: Channel): Promise<TestPageResult> {
    const contact = contactFor(recipient, channel);
    const masked = contact === null ? null : maskContact(contact);
    const driver = this.deps.registry.get(channel);
    const reason = this.unavailableReason(recipient, channel);
    if (reason !== null || contact === null || driver === null)
      return {channel, contact: masked, outcome: "unavailable", detail: reason, verified_at: null};
    const result = await deliverDirect(driver, this.testDelivery(recipient, channel, contact), TIMEOUT_MS);
    if (!verifies(result))
      return {channel, contact: masked, outcome: result.outcome, detail: result.detail, verified_at: null};
    const at = isoTimestamp(this.deps.clock.now());
    await this.deps.verifications.record(recipient.uuid, channel, contact, at);
    return {channel, contact: masked, outcome: result.outcome, detail: result.detail, verified_at: at};
  }

  private testDelivery(recipient: Recipient, channel: Channel, contact: string): Delivery {
    return {
      channel,
      recipient: {uuid: recipient.uuid, name: recipient.name},
      contact,
      alerts: [
        {
          // No notification stands behind this id: an acknowledgement of it finds nothing to close.
          notification_id: newId("test", this.deps.clock.now()),
          priority: "info",
          message: `[TEST] Klaxon test page for ${recipient.name}: no action needed`,
          source: "klaxon test page",
          link: null
        }
      ],
      acknowledge: () => Promise.resolve(),
      testPage: true
    };
  }
}
