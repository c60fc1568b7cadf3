import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  MaxItems,
  MaxLength,
  MinLength,
  Nullable,
  Required
} from "@tsed/schema";
import {ACK_VIA, NOTIFICATION_STATUSES, PRIORITIES} from "../../domain/vocabulary.js";
import {TAIL_BATCH_MAX_ITEMS} from "../../domain/tail.js";

/** An Idempotency-Key's stored answer, as the former active's journal holds it. */
@AdditionalProperties(false)
export class HandedIdempotencyModel {
  @Required() @MinLength(1) @MaxLength(128) api_key_id: string;
  @Required() @MinLength(1) @MaxLength(255) key: string;
  @Required() @MaxLength(128) fingerprint: string;
  @Required() @Integer() status: number;
  // A send's stored answer is a few hundred bytes; the bound keeps one notification well inside
  // the 64 KiB body limit, so an oversized item is refused for its field (400), not its size (413).
  @Required() @MaxLength(32_000) body: string;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") expires_at: string;
}

/** One notification as the former active's journal holds it. */
@AdditionalProperties(false)
export class HandedNotificationModel {
  @Required() @MinLength(1) @MaxLength(64) id: string;
  @Required() @MinLength(1) @MaxLength(64) recipient_uuid: string;
  @Required() @MinLength(1) @MaxLength(4000) message: string;
  @Required() @Enum(...PRIORITIES) priority: (typeof PRIORITIES)[number];
  @Required() @Nullable(String) @MaxLength(128) source: string | null;
  @Required() @Nullable(String) @MaxLength(255) dedup_key: string | null;
  @Required() @Nullable(String) @MaxLength(2048) link: string | null;
  @Required() @Nullable(String) @MaxLength(128) service: string | null;
  @Required() @Nullable(String) @MaxLength(128) environment: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Enum(...NOTIFICATION_STATUSES) status: (typeof NOTIFICATION_STATUSES)[number];
  @Required() @Nullable(String) @Format("date-time") acknowledged_at: string | null;
  @Required() @Nullable(String) @MaxLength(128) acknowledged_by: string | null;
  @Required() @Nullable(String) @Enum(...ACK_VIA, null) acknowledged_via: (typeof ACK_VIA)[number] | null;
  @Required() @Nullable(String) @MaxLength(1000) ack_note: string | null;
  @Required() @Nullable(String) @Format("date-time") resolved_at: string | null;
  @Required() @Nullable(String) @MaxLength(128) api_key_id: string | null;
  @Required() @Nullable(HandedIdempotencyModel) idempotency: HandedIdempotencyModel | null;
}

@AdditionalProperties(false)
export class TailHandOverModel {
  @Required() @MinLength(1) @MaxLength(128) @Description("The former active's box name") from_box: string;
  @Required()
  @MinLength(1)
  @MaxLength(255)
  @Description("Names this hand-over (the former journal's folder); a replay is known by it")
  hand_over: string;
  @Required()
  @MaxItems(TAIL_BATCH_MAX_ITEMS)
  @CollectionOf(HandedNotificationModel)
  @Description("What the former active changed after the newest beacon of it in this box's copy")
  notifications: HandedNotificationModel[];
  @Required()
  @Description("The hand-over's last request: the admin is told how many came home after it")
  last_batch: boolean;
}

export class TailRecoveryOutcomeModel {
  @Required() @Integer() recovered: number;
  @Required() @Integer() applied: number;
  @Required() @Integer() present: number;
  @Required() @CollectionOf(String) refused: string[];
}

export class TakeoverModel {
  @Required() @Integer() epoch: number;
  @Required() box: string;
  @Required() from: string;
  @Required() @Integer() from_epoch: number;
  @Required() @Format("date-time") copy_beacon_at: string;
}
