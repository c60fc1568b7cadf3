import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Modem} from "../../modem/modem.js";
import type {SmsStorage} from "../../modem/modem-sms.js";
import type {StoredSms} from "../../modem/sms-codec.js";
import type {InboundSmsRepository} from "../../store/journal/inbound-sms.repository.js";
import type {Journal} from "../../store/journal/journal.js";
import {assembleMessages} from "./sms-reassembly.js";

/** One incoming message as the command handler gets it: who sent it, the whole text, and when. */
export interface InboundMessage {
  sender: string;
  /** Every part of a concatenated message, joined. */
  text: string;
  /** When the network took it (ISO, UTC); when Klaxon read it if the modem did not say. */
  receivedAt: string;
}

/** A message on the SIM that cannot be read: kept there, and shown on the Status page. */
interface UnreadableSms {
  sim_index: number;
  form: "pdu" | "text";
  problem: string | null;
}

/** What the Status page (through /readyz) shows about the SIM's inbox. */
export interface SmsInboxDetails {
  sim_storage: SmsStorage | null;
  unreadable_sms: UnreadableSms[];
}

// Warn while the SIM has room for fewer than a fifth of its slots: a full SIM takes no reply.
const NEARLY_FULL = 0.8;
// A concatenated reply whose missing part has not come within this time is handed on as it is.
const PARTS_WAIT_MS = 10 * 60_000;

/** What SmsInbox works with, by name. */
export interface SmsInboxDeps {
  modem: Modem;
  journal: Journal;
  inbound: InboundSmsRepository;
  interpret: (message: InboundMessage) => Promise<void>;
  clock: Clock;
  logger: Logger;
}

/**
 * The SIM's incoming messages, never lost: each one is committed to the journal (as listed, and
 * what it says) before the modem deletes it; one that cannot be read stays on the SIM, is logged
 * once at warn and shown in `details`. Parts of a concatenated message wait in the journal until
 * all have come, then the whole text goes to `interpret`; a message is marked handled only once
 * `interpret` has returned, so one it failed on is tried again at the next drain or arrival.
 * The storage's fill level is read each time, and a nearly full SIM is warned about.
 */
export class SmsInbox {
  private storage: SmsStorage | null = null;
  private unreadable = new Map<number, UnreadableSms>();

  constructor(private readonly deps: SmsInboxDeps) {}

  /** Everything in storage (at start and after a reconnect); an empty SIM is not even listed. */
  async drain(): Promise<void> {
    const storage = await this.checkStorage();
    if (storage?.used === 0) {
      this.unreadable.clear();
    } else {
      const stored = await this.deps.modem.listMessages();
      this.unreadable.clear();
      if (stored.length) this.deps.logger.info("sms: reading the messages stored on the SIM", {count: stored.length});
      for (const sms of stored) await this.take(sms);
      if (stored.length) await this.checkStorage();
    }
    await this.handOn();
  }

  /** The message the modem announced at `index` (+CMTI, or +CDSI for a status report). */
  async arrived(index: number): Promise<void> {
    const sms = await this.deps.modem.readMessage(index);
    if (sms) await this.take(sms);
    await this.checkStorage();
    await this.handOn();
  }

  details(): SmsInboxDetails {
    return {sim_storage: this.storage, unreadable_sms: [...this.unreadable.values()]};
  }

  // Commit first, then delete: whatever happens after the commit, the content is in the journal.
  private async take(sms: StoredSms): Promise<void> {
    const modem = this.deps.modem;
    // A status report settled by the modem as it was read: nothing in it to keep.
    if (sms.content?.kind === "status_report") return modem.deleteMessage(sms.index);
    const message = sms.content
      ? {sender: sms.content.sender, body: sms.content.text, sentAt: sms.content.sentAt, part: sms.content.concat}
      : null;
    const storedAt = isoTimestamp(this.deps.clock.now());
    const record = {simIndex: sms.index, form: sms.form, raw: sms.raw, message, problem: sms.problem, storedAt};
    const isNew = await this.deps.journal.write(() => this.deps.inbound.store(record));
    if (message) return modem.deleteMessage(sms.index);
    this.unreadable.set(sms.index, {sim_index: sms.index, form: sms.form, problem: sms.problem});
    if (isNew)
      this.deps.logger.warn("sms: a message on the SIM cannot be read; it stays there and is kept in the journal", {
        sim_index: sms.index,
        form: sms.form,
        problem: sms.problem
      });
  }

  private async handOn(): Promise<void> {
    const waiting = this.deps.journal.read(() => this.deps.inbound.waiting());
    for (const message of assembleMessages(waiting, this.deps.clock.now(), PARTS_WAIT_MS)) {
      try {
        await this.deps.interpret({sender: message.sender, text: message.text, receivedAt: message.receivedAt});
      } catch (error) {
        this.deps.logger.warn("sms: acting on a message failed; it is tried again at the next drain", {
          error: error as Error
        });
        continue;
      }
      await this.deps.journal.write(() =>
        this.deps.inbound.markHandled(message.ids, isoTimestamp(this.deps.clock.now()))
      );
    }
  }

  private async checkStorage(): Promise<SmsStorage | null> {
    const before = this.storage;
    this.storage = await this.deps.modem.smsStorage();
    const nearlyFull = (storage: SmsStorage | null) => storage !== null && storage.used >= storage.total * NEARLY_FULL;
    if (nearlyFull(this.storage) && !nearlyFull(before))
      this.deps.logger.warn("sms: the SIM's message storage is nearly full; a full SIM takes no more replies", {
        ...this.storage
      });
    return this.storage;
  }
}
