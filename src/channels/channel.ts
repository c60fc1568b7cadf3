import type {Channel, Priority} from "../domain/vocabulary.js";

/** One alert as a channel presents it. */
export interface AlertSummary {
  notification_id: string;
  priority: Priority;
  message: string;
  source: string | null;
  link: string | null;
}

/**
 * What a driver is asked to deliver: one contact, one or more alerts. Several alerts due for
 * the same person on the same channel travel together (one call that names them all), and an
 * acknowledgement through this delivery acknowledges each of them.
 */
export interface Delivery {
  channel: Channel;
  /** `timeZone`: the zone the person reads times in (policy.ts `time_zone`); absent: the box's. */
  recipient: {uuid: string; name: string; timeZone?: string};
  /** The address on this channel: phone number, email address, Telegram chat id. */
  contact: string;
  alerts: AlertSummary[];
  /**
   * Commits the acknowledgement of every alert in this delivery, through this channel, by `by`
   * (key 1 during a call). It does not abort this delivery, so the driver can still confirm it to
   * the person before it ends.
   */
  acknowledge(by: string): Promise<void>;
  /**
   * A test page (POST /api/v1/recipients/{uuid}/test) or a hand-off notice: no notification stands
   * behind it, so a driver offers no way to acknowledge it (an email carries no acknowledge link).
   */
  testPage?: boolean;
}

/** How a delivery ended, as the attempt outcome vocabulary (CONTRACT section 2) has it. */
export interface DeliveryResult {
  outcome: "sent" | "delivered" | "answered" | "no_answer" | "busy" | "failed";
  /** The channel's own words for what happened (the modem's reason, the SMTP reply). */
  detail: string | null;
  /** The person declined and asked for the next one in the chain (key 9): the next step fires now. */
  passedOn?: boolean;
  /**
   * A confirmation the channel gives later, after `sent` (an SMS delivery report, `+CDS`):
   * resolves `delivered` when the network reports the message delivered, `failed` when it
   * reports it undeliverable, or null when no report came within the driver's own limit or the
   * driver stopped. Never rejects.
   */
  confirmation?: Promise<LateConfirmation | null>;
}

/** What a channel reported after the delivery ended. */
export interface LateConfirmation {
  outcome: "delivered" | "failed";
  detail: string | null;
}

/**
 * A failure a driver reports by throwing. `permanent` means retrying this contact is pointless
 * (bot blocked, address rejected): the contact is then shown unavailable with the reason.
 */
export class ChannelError extends Error {
  override name = "ChannelError";
  constructor(
    message: string,
    readonly permanent: boolean
  ) {
    super(message);
  }
}

/**
 * One driver per channel; only drivers touch the outside world. Drivers neither retry nor write
 * to the store: the runner records every outcome.
 */
export interface ChannelDriver {
  readonly channel: Channel;
  /** How many deliveries may run at once: the modem has one line, email many. */
  readonly concurrency: number;
  /** Why the channel cannot be used right now (settings missing, modem unregistered, WAN down), or null. */
  unavailableReason(): string | null;
  /** Delivers; resolves with the outcome or throws ChannelError. `signal` aborts (hang up) when the alerts are closed elsewhere. */
  deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult>;
  /** Opens what the driver holds (serial port, update poller). Must not throw for a peer that is down: report it as unavailable and keep retrying. */
  start?(): Promise<void>;
  /** Closes it again; deliveries in progress have been aborted before this is called. */
  stop?(): Promise<void>;
  /** Live details for /readyz and the dashboard (modem signal, WAN state); never a secret. */
  details?(): Record<string, unknown>;
}

/**
 * How inbound paths (a Telegram button, an SMS reply, an email link) acknowledge alerts after
 * their delivery has ended. Unknown or already closed alerts are skipped, not errors.
 */
export interface AcknowledgementPort {
  /**
   * `contacts` are the channel addresses that acknowledged, most specific first (the Telegram user
   * who pressed, then the chat; the phone that replied): the audit log names the recipient with
   * the first one that matches, or the system when none does.
   */
  acknowledge(notificationIds: string[], by: string, via: Channel, contacts?: string[]): Promise<void>;
}

/** A recipient as a phone reaches Klaxon: who it is, and the number on their record. */
export interface PhoneOwner {
  uuid: string;
  name: string;
  phone: string;
  /** True when the recipient set a `command_pin`: commands and calls in must give it. */
  hasPin: boolean;
}

/** What a command did to each alert it named: changed now, or already closed (left as it was). */
export interface RemoteChange {
  changed: string[];
  alreadyClosed: string[];
}

/**
 * What a known phone may do without the internet (SMS commands, a call to the modem): see the open
 * alerts sent to its owner, and acknowledge or resolve them as that person. Every use is audited
 * with the recipient as the actor.
 */
export interface RemoteControlPort {
  /** The recipients with a phone number; the channel matches the caller's number against them. */
  phoneOwners(): PhoneOwner[];
  /** Open alerts sent to the person on `channels` (all when absent), the most recently sent first. */
  openAlertsSentTo(person: PhoneOwner, channels?: readonly Channel[]): AlertSummary[];
  acknowledge(ids: string[], person: PhoneOwner, via: "sms" | "voice_call"): Promise<RemoteChange>;
  /** Resolution has no channel of its own in the record; the audit names the person. */
  resolve(ids: string[], person: PhoneOwner): Promise<RemoteChange>;
  /** Whether `pin` is the person's `command_pin` (false when they have none). */
  checkPin(person: PhoneOwner, pin: string): Promise<boolean>;
  /** Records a command that changes no alert (STATUS, HELP, a call in) in the audit log. */
  record(person: PhoneOwner, via: "sms" | "voice_call", command: string): Promise<void>;
}

/** What one channel would send for a sample alert: the texts, as the channel's own code makes them. */
export type ChannelPreview =
  | {channel: "email"; subject: string; text: string; html: string | null}
  | {channel: "sms"; text: string; encoding: "gsm7" | "ucs2"; parts: number}
  | {channel: "telegram_voice"; text: string; script: string}
  | {channel: "voice_call"; script: string};

/** The channels whose preview has speech to play. */
export const SPOKEN_CHANNELS = ["voice_call", "telegram_voice"] as const;
export type SpokenChannel = (typeof SPOKEN_CHANNELS)[number];

/** Builds what a channel would send, without sending: a recipient's preview (docs/dashboard.md). */
export interface MessagePreviewer {
  /** The alert every preview shows. */
  readonly sample: AlertSummary;
  /** `recipient.timeZone`: the zone their own times are in (their quiet hours'); absent: the box's. */
  preview(channel: Channel, recipient: {name: string; timeZone?: string}, nowMs: number): ChannelPreview;
  /** The spoken channel's script as WAV; rejects when speech cannot be made on this box. */
  speech(channel: SpokenChannel): Promise<Buffer>;
}
