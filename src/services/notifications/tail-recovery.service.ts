import type {Priority} from "../../domain/vocabulary.js";
import {TAKEOVER_DOCUMENT, type HandedNotification, type TailHandOver, type TakeoverRecord} from "../../domain/tail.js";
import type {NotificationRecord, RecoveredChange} from "../../domain/notification.js";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {boxToken, tokensEqual} from "../../lib/tokens.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import {IdempotencyRepository} from "../../store/journal/idempotency.repository.js";
import type {ReplicationRepository} from "../../store/journal/replication.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import type {EventPublisher} from "./event-publisher.js";
import type {NotificationsService, SendInput} from "./notifications.service.js";
import {AppError} from "../shared/errors.js";

export interface TailRecoveryOutcome {
  /** Alerts this box lacked, now accepted under their own id and time. */
  recovered: number;
  /** Acknowledgements and resolves applied to alerts still open here. */
  applied: number;
  /** Changes this box had already (shipped, handed over before, or sent again by the client). */
  present: number;
  /** Alerts this box cannot accept (their recipient is gone here): kept by the former active, and said loudly. */
  refused: string[];
}

export interface TailRecoveryDeps {
  journal: Journal;
  notifications: NotificationsService;
  records: NotificationsRepository;
  /** The replicated documents: the ack-link key the token is derived from, the takeover, the notices sent; null on a single box. */
  documents: ReplicationRepository | null;
  audit: AuditService;
  events: EventPublisher;
  clock: Clock;
  logger: Logger;
  /** Whom to tell, once per hand-over, how many changes came home. */
  settings: {self_monitoring: {recipient: string; priority: Priority}};
}

const ACK_LINK_KEY_DOCUMENT = "ack_link_key";

/**
 * The new active's side of "the tail comes home" (docs/high-availability.md): a former active that
 * comes back hands over what it accepted and never shipped. Each change is applied once (by
 * notification id and change), so a hand-over interrupted by a crash of either box is simply sent again.
 */
export class TailRecoveryService {
  private readonly idempotency: IdempotencyRepository;

  constructor(private readonly deps: TailRecoveryDeps) {
    // The raw answers: a handed-over key's answer is stored as the former active stored it.
    this.idempotency = new IdempotencyRepository(deps.journal);
  }

  /** Whether `presented` is the pair's box token; throws `unauthenticated` otherwise. */
  admit(presented: string | undefined): void {
    const key = this.deps.documents?.document(ACK_LINK_KEY_DOCUMENT);
    if (!presented || !key || !tokensEqual(presented, boxToken(key)))
      throw new AppError("unauthenticated", "the hand-over needs the box token of this pair (X-Klaxon-Box-Token)");
  }

  /** What this box's takeover noted of the copy it took over; null on a box that never took over. */
  takeover(): TakeoverRecord | null {
    const body = this.deps.documents?.document(TAKEOVER_DOCUMENT) ?? null;
    return body === null ? null : (JSON.parse(body) as TakeoverRecord);
  }

  async recover(handOver: TailHandOver): Promise<TailRecoveryOutcome> {
    const {journal, records, logger} = this.deps;
    const outcome = await journal.write(() => {
      const counts: TailRecoveryOutcome = {recovered: 0, applied: 0, present: 0, refused: []};
      for (const handed of handOver.notifications) this.take(handed, handOver, counts);
      return counts;
    });
    logger.info("took over the tail of a former active's journal", {from: handOver.from_box, ...outcome});
    if (outcome.refused.length)
      logger.error("alerts of a former active's tail this box cannot accept (their recipient is gone here)", {
        from: handOver.from_box,
        refused: outcome.refused
      });
    const total = journal.read(() => records.countRecovered(handOver.hand_over));
    if (handOver.last_batch && total > 0) await this.tellOnce(handOver, total);
    return outcome;
  }

  /** One notification, inside the hand-over's write. */
  private take(handed: HandedNotification, handOver: TailHandOver, counts: TailRecoveryOutcome): void {
    const {records, notifications, clock} = this.deps;
    const mark = (change: RecoveredChange["change"]) => ({
      change,
      from_box: handOver.from_box,
      hand_over: handOver.hand_over,
      recovered_at: isoTimestamp(clock.now())
    });
    let took = false;
    if (!records.get(handed.id)) {
      if (this.sentAgain(handed)) {
        counts.present++;
        return;
      }
      if (!this.acceptAgain(handed)) {
        counts.refused.push(handed.id);
        return;
      }
      this.note(records.get(handed.id)!, mark("accepted"));
      counts.recovered++;
      took = true;
    }
    const close = closing(handed);
    if (close && closedNow(() => notifications.close(handed.id, SYSTEM_ACTOR, close))) {
      this.note(records.get(handed.id)!, mark(handed.status === "resolved" ? "resolved" : "acknowledged"));
      counts.applied++;
      took = true;
    }
    if (!took) counts.present++;
  }

  /** Accepts it as its first acceptance did (its id, time and key's answer); false when this box refuses it (its recipient is gone). */
  private acceptAgain(handed: HandedNotification): boolean {
    const {notifications} = this.deps;
    const {idempotency} = this;
    try {
      notifications.accept(inputOf(handed), actorOf(handed), {
        id: handed.id,
        acceptedAtMs: Date.parse(handed.created_at)
      });
    } catch (error) {
      if (error instanceof AppError) return false;
      throw error;
    }
    const key = handed.idempotency;
    if (key)
      idempotency.insert(
        key.api_key_id,
        key.key,
        {fingerprint: key.fingerprint, status: key.status, body: key.body},
        {nowIso: key.created_at, expiresIso: key.expires_at}
      );
    return true;
  }

  /** A client that sent it again to this box (same Idempotency-Key), or an open alert it merges into (same dedup key): this box has it. */
  private sentAgain(handed: HandedNotification): boolean {
    const {records, clock} = this.deps;
    const {idempotency} = this;
    const key = handed.idempotency;
    if (key && idempotency.find(key.api_key_id, key.key, isoTimestamp(clock.now()))) return true;
    return handed.dedup_key !== null && records.findOpenByDedup(handed.recipient_uuid, handed.dedup_key) !== null;
  }

  /** The mark, its audit entry and its `notification.recovered` event; nothing when the change was noted before. */
  private note(record: NotificationRecord, change: RecoveredChange): void {
    const {records, audit, events, notifications, clock} = this.deps;
    if (!records.markRecovered(record.id, change)) return;
    audit.append(
      SYSTEM_ACTOR,
      "notification.recovered",
      {type: "notification", id: record.id, source: record.source},
      {change: change.change, from_box: change.from_box, hand_over: change.hand_over}
    );
    events.emit("notification.recovered", notifications.view(record), clock.now(), {recovered: change});
  }

  private async tellOnce(handOver: TailHandOver, total: number): Promise<void> {
    const {documents, notifications, settings, logger} = this.deps;
    const selfMonitoring = settings.self_monitoring;
    const told = `recovery-notice:${handOver.hand_over}`;
    if (!documents || documents.document(told) !== null) return;
    const message = `Klaxon: ${total} change(s) that ${handOver.from_box} accepted before it went down and never shipped (alerts, acknowledgements, resolves) came home from its journal when it returned; each is marked recovered`;
    if (selfMonitoring.recipient)
      await notifications.send(
        {
          recipient_uuid: selfMonitoring.recipient,
          message,
          priority: selfMonitoring.priority,
          source: "klaxon",
          dedup_key: `klaxon:recovered:${handOver.hand_over}`
        },
        SYSTEM_ACTOR
      );
    else logger.warn(`${message}; nobody is told: self_monitoring.recipient is empty`);
    await documents.addDocument(told, String(total));
  }
}

function inputOf(handed: HandedNotification): SendInput {
  return {
    recipient_uuid: handed.recipient_uuid,
    message: handed.message,
    priority: handed.priority,
    ...(handed.source === null ? {} : {source: handed.source}),
    ...(handed.dedup_key === null ? {} : {dedup_key: handed.dedup_key}),
    ...(handed.link === null ? {} : {link: handed.link}),
    ...(handed.service === null ? {} : {service: handed.service}),
    ...(handed.environment === null ? {} : {environment: handed.environment})
  };
}

/** The key it was sent with, so the recovered record names it as the original did. */
function actorOf(handed: HandedNotification): Actor {
  return handed.api_key_id ? {type: "api_key", id: handed.api_key_id} : SYSTEM_ACTOR;
}

/** Whether an acknowledgement or resolve changed the alert here: one that conflicts (acknowledging a resolved alert) changes nothing. */
function closedNow(close: () => {changed: boolean}): boolean {
  try {
    return close().changed;
  } catch (error) {
    if (error instanceof AppError && error.code === "conflict") return false;
    throw error;
  }
}

/** The acknowledgement or resolve the former active recorded, as of its own time; null for an open alert. */
function closing(handed: HandedNotification) {
  if (handed.status === "acknowledged")
    return {
      ack: {by: handed.acknowledged_by, note: handed.ack_note, via: handed.acknowledged_via ?? "api"},
      nowIso: handed.acknowledged_at ?? handed.created_at
    };
  if (handed.status === "resolved") return {ack: null, nowIso: handed.resolved_at ?? handed.created_at};
  return null;
}
