import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {Journal} from "../../store/journal/journal.js";
import type {PendingRelay, TelegramRelayRepository} from "../../store/journal/telegram-relay.repository.js";
import type {NotificationStatus} from "../../domain/vocabulary.js";
import type {AlertSummary, Delivery} from "../channel.js";
import type {ConnectivityProbe} from "../connectivity.js";
import type {TelegramAlertSender} from "./alert-sender.js";
import {BotApiError} from "./bot-api-client.js";
import {observationOf} from "./link-observation.js";

export interface RelayParts {
  relays: TelegramRelayRepository;
  sender: TelegramAlertSender;
  connectivity: ConnectivityProbe;
  journal: Journal;
  clock: Clock;
  logger: Logger;
}

// An exhausted alert was never acknowledged: it still needs a person, so it is relayed too.
const CLOSED: ReadonlySet<NotificationStatus> = new Set(["acknowledged", "resolved"]);

const summary = (row: PendingRelay): AlertSummary => ({
  notification_id: row.notification_id,
  priority: row.priority,
  message: row.message,
  source: row.source,
  link: row.link
});

/**
 * Telegram messages whose delivery failed because the link dropped while it was under way (the
 * attempt is recorded failed and the chain moves on), relayed once when Telegram is back. A step
 * skipped because Telegram was already unreachable needs no relay: it stays due and is carried
 * when the channel is usable again. Each pass relays chat by chat, oldest kept
 * message first: one message per chat naming its still-open alerts in order, rows of closed alerts
 * dropped. A crash between sending and recording repeats that one message (at least once).
 */
export class TelegramRelay {
  private running: Promise<void> | null = null;
  private stopper = new AbortController();

  constructor(private readonly parts: RelayParts) {}

  pendingCount(): number {
    return this.parts.journal.read(() => this.parts.relays.pendingCount());
  }

  /** Keeps a delivery that failed because the link dropped while it was under way. */
  keepDelivery(delivery: Delivery): Promise<void> {
    const now = isoTimestamp(this.parts.clock.now());
    return this.parts.journal.write(() => {
      for (const alert of delivery.alerts) {
        this.parts.relays.insert({
          notification_id: alert.notification_id,
          attempt_id: null,
          recipient_uuid: delivery.recipient.uuid,
          chat_id: delivery.contact,
          created_at: now
        });
      }
    });
  }

  /** One pass over what waits; a second call while one runs joins it. */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch((error) => this.parts.logger.error("Telegram relay pass failed", {error: error as Error}))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopper.abort(new Error("the gateway is stopping"));
    await this.running;
    this.stopper = new AbortController();
  }

  private async pass(): Promise<void> {
    const {relays, journal, connectivity} = this.parts;
    while (!this.stopper.signal.aborted && connectivity.unavailableReason() === null) {
      const pending = journal.read(() => relays.pending());
      if (pending.length === 0) return;
      const chatId = pending[0].chat_id;
      const rows = pending.filter((row) => row.chat_id === chatId);
      if (!(await this.relayChat(chatId, rows))) return;
    }
  }

  /** Relays one chat's rows; false when the pass must stop (the link is down again). */
  private async relayChat(chatId: string, rows: PendingRelay[]): Promise<boolean> {
    const {relays, sender, connectivity, journal, clock, logger} = this.parts;
    const open = rows.filter((row) => !CLOSED.has(row.status));
    const alerts = [...new Map(open.map((row) => [row.notification_id, summary(row)])).values()];
    const finishAll = (outcome: "relayed" | "failed", error: string | null) =>
      journal.write(() => {
        const now = isoTimestamp(clock.now());
        for (const row of rows) {
          if (CLOSED.has(row.status))
            relays.finish(row.seq, "dropped", now, `${row.status} before Telegram was reachable again`);
          else relays.finish(row.seq, outcome, now, error);
        }
      });
    if (alerts.length === 0) {
      await finishAll("relayed", null);
      logger.info("Telegram relay: nothing left to send to a chat, every alert closed meanwhile", {
        dropped: rows.length
      });
      return true;
    }
    try {
      const detail = await sender.send(chatId, alerts, rows[0].created_at, this.stopper.signal);
      connectivity.observe({ok: true});
      await finishAll("relayed", null);
      logger.info("Telegram relay: held message sent", {
        notifications: alerts.map((alert) => alert.notification_id),
        detail
      });
      return true;
    } catch (error) {
      if (this.stopper.signal.aborted) return false;
      const observation = observationOf(error);
      if (observation) connectivity.observe(observation);
      const waitForLink =
        !(error instanceof BotApiError) || ["unreachable", "unauthorized", "flood"].includes(error.failure);
      if (waitForLink) {
        logger.warn("Telegram relay paused; the messages stay queued", {error: error as Error});
        return false;
      }
      await finishAll("failed", (error as Error).message);
      logger.warn("Telegram relay: a held message was refused for good", {
        notifications: alerts.map((alert) => alert.notification_id),
        error: error
      });
      return true;
    }
  }
}
