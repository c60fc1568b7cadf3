import type {AlertSummary, PhoneOwner, RemoteChange, RemoteControlPort} from "../../channels/channel.js";
import {acknowledgerByPhone, recipientActor} from "../../domain/actor.js";
import type {NotificationRecord} from "../../domain/notification.js";
import {CHANNELS, type Channel} from "../../domain/vocabulary.js";
import type {RecipientsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import type {AuditService} from "../shared/audit.service.js";
import {AppError} from "../shared/errors.js";
import {verifyPassword} from "../../lib/password-hash.js";
import {alertSummary} from "../notifications/notification-view.js";

// More than a phone can show or a caller will listen to; STATUS says "+N more" past what fits.
const MAX_OPEN_ALERTS = 50;

/** What RemoteControlService works with, by name. */
export interface RemoteControlDeps {
  journal: Journal;
  recipients: RecipientsRepository;
  records: NotificationsRepository;
  audit: AuditService;
  /** The owner of the alert lifecycle, which the changes go through. */
  lifecycle: Pick<NotificationsService, "acknowledge" | "resolve">;
}

/**
 * The phone as a remote control (SMS commands, calls in): what a known recipient may see and do
 * from their phone. Changes go through the notifications service with the recipient as the actor,
 * so they are audited, announced and stop the escalation exactly as one from the API would.
 */
export class RemoteControlService implements RemoteControlPort {
  constructor(private readonly deps: RemoteControlDeps) {}

  phoneOwners(): PhoneOwner[] {
    return this.deps.recipients
      .all()
      .flatMap((recipient) =>
        recipient.phone
          ? [{uuid: recipient.uuid, name: recipient.name, phone: recipient.phone, hasPin: !!recipient.command_pin_hash}]
          : []
      );
  }

  async checkPin(person: PhoneOwner, pin: string): Promise<boolean> {
    const stored = this.deps.recipients.get(person.uuid)?.command_pin_hash;
    return !!stored && (await verifyPassword(pin, stored));
  }

  openAlertsSentTo(person: PhoneOwner, channels: readonly Channel[] = CHANNELS): AlertSummary[] {
    return this.deps.journal
      .read(() => this.deps.records.openSentTo(person.uuid, channels, MAX_OPEN_ALERTS))
      .map(alertSummary);
  }

  acknowledge(ids: string[], person: PhoneOwner, via: "sms" | "voice_call"): Promise<RemoteChange> {
    return this.change(
      ids,
      (record) => record.status === "acknowledged" || record.status === "resolved",
      (id) =>
        this.deps.lifecycle.acknowledge(
          id,
          {by: acknowledgerByPhone(person.name, person.phone), note: null, via},
          recipientActor(person.uuid)
        )
    );
  }

  resolve(ids: string[], person: PhoneOwner): Promise<RemoteChange> {
    return this.change(
      ids,
      (record) => record.status === "resolved",
      (id) => this.deps.lifecycle.resolve(id, recipientActor(person.uuid))
    );
  }

  record(person: PhoneOwner, via: "sms" | "voice_call", command: string): Promise<void> {
    return this.deps.audit.record(
      recipientActor(person.uuid),
      "remote_control.used",
      {type: "recipient", id: person.uuid},
      {
        via,
        command
      }
    );
  }

  // Concurrent, like acknowledgeMany: the changes share group commits. An alert gone from the
  // journal (retention) is left out of both lists; one closed meanwhile counts as already done.
  private async change(
    ids: string[],
    alreadyDone: (record: NotificationRecord) => boolean,
    apply: (id: string) => Promise<unknown>
  ): Promise<RemoteChange> {
    const result: RemoteChange = {changed: [], alreadyClosed: []};
    await Promise.all(
      ids.map(async (id) => {
        const before = this.deps.journal.read(() => this.deps.records.get(id));
        if (!before) return;
        if (alreadyDone(before)) return void result.alreadyClosed.push(id);
        try {
          await apply(id);
          result.changed.push(id);
        } catch (error) {
          if (!(error instanceof AppError && (error.code === "conflict" || error.code === "not_found"))) throw error;
          if (error.code === "conflict") result.alreadyClosed.push(id);
        }
      })
    );
    return {changed: inOrder(ids, result.changed), alreadyClosed: inOrder(ids, result.alreadyClosed)};
  }
}

function inOrder(ids: string[], subset: string[]): string[] {
  return ids.filter((id) => subset.includes(id));
}
