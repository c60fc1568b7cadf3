import type {Channel} from "../domain/vocabulary.js";
import {smsEncodingFor} from "../modem/sms-codec.js";
import {segmentText} from "../modem/sms-pdu.js";
import type {AlertSummary, ChannelPreview, MessagePreviewer, SpokenChannel} from "./channel.js";
import {composeEmail} from "./email/email-message.js";
import {composeSms, planConcatenatedSms} from "./sms/sms-text.js";
import {SpeechSynthesizer} from "./speech/speech-synthesizer.js";
import {spokenAlerts} from "./speech/spoken-alert.js";
import {alertText} from "./telegram/telegram-message.js";
import {alertSpeech, promptSpeech, type CallKeys} from "./voice-call/speech.js";

/** The box's settings a preview follows, as the drivers do. */
export interface PreviewSettings {
  /** modem.sms_max_parts: a longer text is cut, as the SMS driver cuts it. */
  smsMaxParts: number;
  keys: CallKeys;
  /** The espeak-ng voice (telegram.voice). */
  voice: string;
  /** Where the ack link of the sample mail points (the gateway's public URL). */
  publicBase: () => string;
}

/** The alert a preview shows: the kind a plant sends, with a non-ASCII character as real ones have. */
export const SAMPLE_ALERT: AlertSummary = {
  notification_id: "notif_00000000000000000000PREVIEW",
  priority: "critical",
  message: "Press 7 hydraulic oil over 80 °C",
  source: "plc-7",
  link: null
};

/** A reply code as the SMS channel gives each alert; a fixed one here, since nothing is sent. */
const SAMPLE_REPLY_CODE = "4821";
const SAMPLE_ACK_VALID_MS = 24 * 3_600_000;
/** A preview's speech is one short script; espeak-ng makes it in well under a second. */
const SPEECH_TIMEOUT_MS = 20_000;

/**
 * What each channel would send for the sample alert, built by the same functions the drivers use
 * (email composer, SMS planner, Telegram text, call speech); nothing is sent.
 */
export class ChannelMessagePreviewer implements MessagePreviewer {
  readonly sample = SAMPLE_ALERT;
  private readonly synthesizer: SpeechSynthesizer;

  constructor(private readonly settings: PreviewSettings) {
    this.synthesizer = new SpeechSynthesizer({voice: settings.voice, timeoutMs: SPEECH_TIMEOUT_MS});
  }

  preview(channel: Channel, recipient: {name: string; timeZone?: string}, nowMs: number): ChannelPreview {
    const alerts = [SAMPLE_ALERT];
    switch (channel) {
      case "email": {
        const url = `${this.settings.publicBase().replace(/\/+$/, "")}/ack/PREVIEW`;
        return {
          channel,
          ...composeEmail({
            recipientName: recipient.name,
            alerts,
            ack: {url, validUntilMs: nowMs + SAMPLE_ACK_VALID_MS},
            timeZone: recipient.timeZone
          })
        };
      }
      case "sms": {
        const text = planConcatenatedSms(composeSms(alerts, SAMPLE_REPLY_CODE), this.settings.smsMaxParts);
        return {channel, text, encoding: smsEncodingFor(text), parts: segmentText(text).length};
      }
      case "telegram_voice":
        return {channel, text: alertText(alerts), script: this.script(channel)};
      case "voice_call":
        return {channel, script: this.script(channel)};
    }
  }

  speech(channel: SpokenChannel): Promise<Buffer> {
    return this.synthesizer.wav(this.script(channel));
  }

  /** What the call speaks when answered, or the Telegram voice note says. */
  private script(channel: SpokenChannel): string {
    const alerts = [SAMPLE_ALERT];
    return channel === "voice_call"
      ? `${alertSpeech(alerts)} ${promptSpeech(this.settings.keys)}`
      : spokenAlerts(alerts);
  }
}
