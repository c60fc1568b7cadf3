import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";
import type {Channel} from "../../domain/vocabulary.js";

/** A contact a channel reported permanently unreachable. */
export interface ContactFailure {
  contact: string;
  reason: string;
  at: string;
}

const SQL = {
  mark: `INSERT INTO contact_failures (recipient_uuid, channel, contact, reason, at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (recipient_uuid, channel) DO UPDATE SET contact = excluded.contact, reason = excluded.reason, at = excluded.at`,
  get: `SELECT contact, reason, at FROM contact_failures WHERE recipient_uuid = ? AND channel = ?`,
  forRecipient: `SELECT channel, contact, reason, at FROM contact_failures WHERE recipient_uuid = ? ORDER BY channel`,
  clear: `DELETE FROM contact_failures WHERE recipient_uuid = ? AND channel = ? AND contact = ?`
};

/** How a waiting chain names an unusable contact: without the address or the server's words, which may hold it (/readyz is public). */
export const CONTACT_UNUSABLE = "contact marked unusable after a permanent failure (see the recipient)";

/**
 * Permanent channel failures per recipient and channel. A failure applies only while the
 * recipient still has the contact that failed: correcting the address or phone clears it.
 */
export class ContactFailuresRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  mark(
    {recipientUuid, channel, contact}: {recipientUuid: string; channel: Channel; contact: string},
    reason: string,
    atIso: string
  ): void {
    this.statements.mark.run(recipientUuid, channel, contact, reason, atIso);
  }

  /** Every failure recorded for the recipient, one per channel; the caller decides which still apply. */
  forRecipient(recipientUuid: string): Array<ContactFailure & {channel: Channel}> {
    return this.statements.forRecipient.all(recipientUuid) as Array<ContactFailure & {channel: Channel}>;
  }

  /** Whether this contact cannot be used on this channel: CONTACT_UNUSABLE, or null. */
  reasonFor(recipientUuid: string, channel: Channel, contact: string | null): string | null {
    return this.detailFor(recipientUuid, channel, contact) === null ? null : CONTACT_UNUSABLE;
  }

  /** The failure in full, for those allowed to read the recipient: when, and the channel's words. */
  detailFor(recipientUuid: string, channel: Channel, contact: string | null): string | null {
    const failure = this.statements.get.get(recipientUuid, channel) as ContactFailure | undefined;
    if (!failure || failure.contact !== contact) return null;
    return `permanent failure since ${failure.at}: ${failure.reason}`;
  }

  /** The contact reached someone after all (a critical alert tries it again): it is usable again. */
  clear(recipientUuid: string, channel: Channel, contact: string): boolean {
    return this.statements.clear.run(recipientUuid, channel, contact).changes > 0;
  }
}
