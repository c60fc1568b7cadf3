import {
  SPOKEN_CHANNELS,
  type AlertSummary,
  type ChannelPreview,
  type MessagePreviewer,
  type SpokenChannel
} from "../../channels/channel.js";
import {contactFor} from "../../domain/recipient.js";
import {CHANNELS} from "../../domain/vocabulary.js";
import type {Clock} from "../../lib/clock.js";
import type {RecipientsRepository} from "../../store/config/repositories.js";
import {AppError, notFound} from "../shared/errors.js";

export interface MessagePreviewDependencies {
  recipients: RecipientsRepository;
  previewer: MessagePreviewer;
  clock: Clock;
}

/** A preview of every channel the recipient has a contact for; the spoken ones with their audio's address. */
export interface RecipientPreview {
  recipient_uuid: string;
  sample: AlertSummary;
  channels: Array<ChannelPreview & {contact: string; audio_url?: string}>;
}

const isSpoken = (channel: string): channel is SpokenChannel =>
  (SPOKEN_CHANNELS as readonly string[]).includes(channel);

/**
 * What a recipient's channels would send for a sample alert, before any hardware is bought:
 * texts from the drivers' own composers, the speech as WAV. Nothing is sent, journalled or audited.
 */
export class MessagePreviewService {
  constructor(private readonly deps: MessagePreviewDependencies) {}

  preview(recipientUuid: string): RecipientPreview {
    const recipient = this.deps.recipients.get(recipientUuid);
    if (!recipient) throw notFound("recipient", recipientUuid);
    const nowMs = this.deps.clock.now();
    // Times in the person's own zone, as their alert emails give them (a schedule's zone needs an alert through it).
    const person = {name: recipient.name, timeZone: recipient.quiet_hours?.timezone};
    const channels = CHANNELS.flatMap((channel) => {
      const contact = contactFor(recipient, channel);
      if (contact === null) return [];
      const shown = this.deps.previewer.preview(channel, person, nowMs);
      const audio = isSpoken(channel) ? {audio_url: `/api/v1/recipients/${recipientUuid}/preview/${channel}.wav`} : {};
      return [{...shown, contact, ...audio}];
    });
    return {recipient_uuid: recipientUuid, sample: this.deps.previewer.sample, channels};
  }

  /** The WAV a spoken channel's preview plays; 404 for a recipient without that contact. */
  async speech(recipientUuid: string, channel: string): Promise<Buffer> {
    const recipient = this.deps.recipients.get(recipientUuid);
    if (!recipient) throw notFound("recipient", recipientUuid);
    if (!isSpoken(channel) || contactFor(recipient, channel) === null)
      throw new AppError("not_found", `recipient ${recipientUuid} has no spoken channel ${channel}`);
    try {
      return await this.deps.previewer.speech(channel);
    } catch (error) {
      // Said, not a 500: a box without espeak-ng still previews every text.
      throw new AppError("conflict", `the speech cannot be made on this box: ${(error as Error).message}`);
    }
  }
}
