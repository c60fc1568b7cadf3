import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Enum,
  Format,
  Integer,
  Max,
  MaxLength,
  Min,
  MinLength,
  Nullable,
  Pattern,
  Required
} from "@tsed/schema";
import {HEARTBEAT_NAME, HEARTBEAT_STATUSES} from "../../domain/heartbeat.js";
import {PRIORITIES} from "../../domain/vocabulary.js";
import {DEFAULT_GRACE_SECONDS} from "../../services/heartbeats/heartbeats.service.js";

const YEAR_SECONDS = 366 * 86_400;

/** The writable fields of a heartbeat: what a merge patch must produce. */
@AdditionalProperties(false)
export class HeartbeatInputModel {
  @Integer()
  @Min(10)
  @Max(YEAR_SECONDS)
  @Description("Seconds between pings. Give this or schedule")
  period_seconds?: number;
  @MinLength(9)
  @MaxLength(128)
  @Description(
    "Five-field cron expression (minute hour day-of-month month day-of-week) for when pings are due. Give this or period_seconds"
  )
  schedule?: string;
  @MinLength(1)
  @MaxLength(64)
  @Description("IANA time zone the schedule is read in; required with schedule")
  timezone?: string;
  @Integer()
  @Min(5)
  @Max(YEAR_SECONDS)
  @Default(DEFAULT_GRACE_SECONDS)
  @Description("How long past the due time it may stay silent (late) before it is down and pages")
  grace_seconds?: number;
  @Required() @Format("uuid") @Description("Recipient, group or schedule paged when it goes down") target: string;
  @Enum(...PRIORITIES) @Default("high") priority?: string;
}

/** The body of POST: the writable fields and the name. */
@AdditionalProperties(false)
export class HeartbeatCreateModel extends HeartbeatInputModel {
  @Required()
  @Pattern(HEARTBEAT_NAME)
  @Description("Slug: lowercase letters, digits, '.', '_' and '-', at most 64; fixed once created")
  name: string;
}

export class HeartbeatModel {
  @Required() name: string;
  @Required() @Nullable(Number) period_seconds: number | null;
  @Required() @Nullable(String) schedule: string | null;
  @Required() @Nullable(String) timezone: string | null;
  @Required() @Integer() grace_seconds: number;
  @Required() @Format("uuid") target: string;
  @Required() @Enum(...PRIORITIES) priority: string;
  @Required()
  @Enum(...HEARTBEAT_STATUSES)
  @Description("new (inert until the first ping), up, late (past due, within grace), down (paged), paused")
  status: string;
  @Required() @Nullable(String) @Format("date-time") last_ping_at: string | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("A run announced with /start that has not finished yet")
  last_start_at: string | null;
  @Required() @Nullable(String) @Format("date-time") @Description("When the next ping is due") expected_at:
    string | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("When it goes down and pages unless pinged first")
  down_at: string | null;
  @Required() @Nullable(String) @Description("The down page a good ping will resolve") notification_id: string | null;
  @Required()
  @Format("uri")
  @Description("Keyless ping address (GET, HEAD or POST; /start and /fail variants). Anyone with it can ping")
  ping_url: string;
  @Required()
  @Nullable(String)
  @Description("The integration that created it with a heartbeat event")
  created_by_integration: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class HeartbeatPageModel {
  @Required() @CollectionOf(HeartbeatModel) items: HeartbeatModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

export class PingAnswerModel {
  @Required() name: string;
  @Required() @Enum(...HEARTBEAT_STATUSES) status: string;
  @Required() @Nullable(String) @Format("date-time") expected_at: string | null;
}
