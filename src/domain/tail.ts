import type {NotificationRecord} from "./notification.js";

/**
 * "The tail comes home" (docs/high-availability.md): what a former active accepted and never
 * shipped, as it hands it to the new active when it comes back.
 */

/**
 * The most notifications one hand-over request carries. Few enough that a request over it still
 * fits the 64 KiB body limit and is refused for its count (400), not for its size (413).
 */
export const TAIL_BATCH_MAX_ITEMS = 100;

/** The journal document a takeover writes: whose copy this box took over, and how far that copy went. */
export const TAKEOVER_DOCUMENT = "takeover";

/** What a takeover noted about the copy it took over (the `takeover` document). */
export interface TakeoverRecord {
  epoch: number;
  box: string;
  /** The former active, its epoch, and its newest beacon in the copy: everything it committed before that beacon is here. */
  from: string;
  from_epoch: number;
  copy_beacon_at: string;
}

/** An Idempotency-Key's stored answer, as the former active's journal holds it. */
export interface HandedIdempotency {
  api_key_id: string;
  key: string;
  fingerprint: string;
  status: number;
  body: string;
  created_at: string;
  expires_at: string;
}

/** One notification as the former active's journal holds it, its target named `recipient_uuid` as a send names it. */
export type HandedNotification = Pick<
  NotificationRecord,
  | "id"
  | "message"
  | "priority"
  | "source"
  | "dedup_key"
  | "link"
  | "service"
  | "environment"
  | "created_at"
  | "status"
  | "acknowledged_at"
  | "acknowledged_by"
  | "acknowledged_via"
  | "ack_note"
  | "resolved_at"
  | "api_key_id"
> & {recipient_uuid: string; idempotency: HandedIdempotency | null};

/** The tail of a former active's journal: what it changed after the newest beacon the new active's copy holds. */
export interface TailHandOver {
  from_box: string;
  /** Names this hand-over (the former journal's folder): a replay is known by it. */
  hand_over: string;
  notifications: HandedNotification[];
  /** The hand-over's last request: the admin is told how many came home after it, not after each. */
  last_batch: boolean;
}

/**
 * Bytes of notifications per hand-over request: under the API's 64 KiB body limit with room for the
 * request's other fields. A tail of half a second is a request or two.
 */
export const TAIL_BATCH_MAX_BYTES = 48 * 1024;

/** A tail cut into requests, and the notifications that had to go without their stored answer. */
export interface TailBatches {
  batches: HandedNotification[][];
  /** Ids whose Idempotency-Key answer was left behind to make them fit (a retry of that send pages again). */
  withoutIdempotency: string[];
}

const utf8 = new TextEncoder();
const jsonBytes = (value: unknown) => utf8.encode(JSON.stringify(value)).length;

/**
 * The notifications in order, cut into requests of at most TAIL_BATCH_MAX_BYTES of JSON and
 * TAIL_BATCH_MAX_ITEMS, one notification each at least. One too large for a request alone (its
 * stored Idempotency-Key answer may be 32,000 characters) goes without that answer rather than
 * never: the alert's own fields, at their API bounds and JSON's worst escaping (6 bytes a
 * character), come to under 48 KiB, so every alert fits and the hand-over cannot stall on one.
 */
export function tailBatches(notifications: readonly HandedNotification[]): TailBatches {
  const batches: HandedNotification[][] = [];
  const withoutIdempotency: string[] = [];
  let bytes = Infinity;
  for (const handed of notifications) {
    let notification = handed;
    let size = jsonBytes(notification);
    if (size > TAIL_BATCH_MAX_BYTES && notification.idempotency) {
      notification = {...notification, idempotency: null};
      size = jsonBytes(notification);
      withoutIdempotency.push(notification.id);
    }
    if (bytes + size > TAIL_BATCH_MAX_BYTES || batches.at(-1)?.length === TAIL_BATCH_MAX_ITEMS) {
      batches.push([]);
      bytes = 0;
    }
    batches.at(-1)!.push(notification);
    bytes += size + 1;
  }
  return {batches, withoutIdempotency};
}
