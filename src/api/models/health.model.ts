import {Any, CollectionOf, Description, Enum, Format, Integer, Nullable, Required} from "@tsed/schema";
import {CHANNELS} from "../../domain/vocabulary.js";

export class JournalReadinessModel {
  @Required() can_commit: boolean;
  @Integer() @Description("With a key only") schema_version?: number;
  @Nullable(String) @Description("With a key only") error?: string | null;
  @Description("With a key only: the journal's file is damaged, until it is restored") damaged?: boolean;
}

export class ChannelStateModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required() available: boolean;
  @Required() @Nullable(String) @Description("Why the gateway cannot use the channel now") reason: string | null;
  @Any("object", "null")
  @Description("The driver's live details (modem signal, WAN state); never a secret. With a key only")
  details?: Record<string, unknown> | null;
}

export class OutboxReadinessModel {
  @Required() @Integer() @Description("-1 when the journal cannot be read") pending: number;
  @Required() @Nullable(String) @Format("date-time") oldest: string | null;
}

export class DiskReadinessModel {
  @Required() path: string;
  @Required() @Nullable(Number) free_bytes: number | null;
  @Required() @Nullable(Number) total_bytes: number | null;
  @Required() @Nullable(String) error: string | null;
}

/** A timed background sweep (heartbeats, maintenance releases): a failed last pass makes the gateway unready. */
export class SweepModel {
  @Required() running: boolean;
  @Required() @Nullable(String) @Format("date-time") next_wake_at: string | null;
  @Required() last_pass_failed: boolean;
}

export class UndeliverableReasonModel {
  @Required()
  @Nullable(String)
  @Description(
    `${CHANNELS.join(", ")}; null when the alerts wait for no channel at all (an empty plan, quiet hours) or the paging auditor found no page carried in time`
  )
  channel: string | null;
  @Required()
  @Description("Why the channel cannot be used now: the fix, e.g. SMTP is not configured (smtp.host and smtp.from)")
  reason: string;
  @Required()
  @Integer()
  @Description("Open notifications waiting for this channel for this reason")
  notifications: number;
  @Required()
  @Integer()
  @Description("Of those, the notifications that have already paged someone: their next step waits")
  reached: number;
}

export class PlanWarningTargetModel {
  @Required() @Format("uuid") uuid: string;
  @Required() @Enum("recipient", "group") kind: string;
  @Required() name: string;
}

export class PlanWarningModel {
  @Required() @Enum("priority_without_channel", "channel_not_configured") kind: string;
  @Required() @Nullable(PlanWarningTargetModel) target: PlanWarningTargetModel | null;
  @Required() @CollectionOf(String) priorities: string[];
  @Required() detail: string;
}

export class UndeliverableModel {
  @Required()
  @Integer()
  @Description(
    "Open notifications waiting for a channel they cannot use now, or found by the paging auditor with no page carried in time; -1 when the journal cannot be read"
  )
  count: number;
  @Required() @CollectionOf(UndeliverableReasonModel) reasons: UndeliverableReasonModel[];
}

export class ScheduleGapModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required() @Format("date-time") @Description("The first gap") starts_at: string;
  @Required() @Format("date-time") ends_at: string;
  @Required() @Integer() @Description("Gaps within the 14 days") gaps: number;
  @Required() @Nullable(String) @Description("Paged during a gap; null: nobody") fallback: string | null;
}

export class UnmappedWarningModel {
  @Required() integration_id: string;
  @Required() name: string;
  @Required() @Integer() messages: number;
  @Required() @Format("date-time") last_at: string;
}

export class PlcLinkStateModel {
  @Required() integration_id: string;
  @Required() name: string;
  @Required() @Enum("modbus", "opcua") kind: string;
  @Required() @Enum("connected", "unreachable") state: string;
  @Required() @Description("When the state last changed") since: string;
  @Required() @Nullable(String) @Description("The last failure in words, kept after a reconnect") last_error:
    string | null;
}

export class MqttBrokerStateModel {
  @Required() integration_id: string;
  @Required() broker_url: string;
  @Required() connected: boolean;
  @Required() @Format("date-time") @Description("When the connection last came up or went down") since: string;
  @Required() @Nullable(String) @Description("The last failure seen, kept after a reconnect") last_error: string | null;
}

export class ParserWorkerCrashesModel {
  @Required() @Integer() throw: number;
  @Required() @Integer() hang: number;
  @Required() @Integer() memory: number;
  @Required() @Integer() exit: number;
}

export class ParserWorkerLastCrashModel {
  @Required() @Enum("throw", "hang", "memory", "exit") kind: string;
  @Required() detail: string;
  @Required() @Description("Unix milliseconds") atMs: number;
}

export class ParserWorkerModel {
  @Required() @Description('"snmp-parser", ...') name: string;
  @Required() @Description("False while it restarts after a crash") running: boolean;
  @Required() @Integer() restarts: number;
  @Required() crashes: ParserWorkerCrashesModel;
  @Required() @Integer() @Description("Input refused unread: no worker running, or its queue full") dropped: number;
  @Required() @Integer() @Description("Input inside a worker when it crashed") lostInCrash: number;
  @Required() @Integer() inFlight: number;
  @Required() @Nullable(ParserWorkerLastCrashModel) lastCrash: ParserWorkerLastCrashModel | null;
  @Required()
  @Any("object")
  @Description("The door's own counts (SNMP: datagrams, replays_refused, invalid_events)")
  counters: Record<string, number>;
}

export class LitestreamStateModel {
  @Required() running: boolean;
  @Required() @Nullable(Number) pid: number | null;
  @Required() @Integer() @Description("Times it ended by itself and was started again") restarts: number;
  @Required()
  @Nullable(String)
  @Description('How the last run ended: "exit 1", "signal SIGKILL", "spawn ENOENT"')
  last_exit: string | null;
}

export class StandbyViewModel {
  @Required() @Description("Since the standby's /healthz last answered") silent_seconds: number;
  @Required() @Nullable(Number) @Description("How far behind the standby's copy is, as it last said") lag_seconds:
    number | null;
}

export class ReplicationStateModel {
  @Required() @Enum("off", "active", "standby") role: string;
  @Required() @Nullable(String) @Description("This box's name in beacons and pages; null on a single box") box:
    string | null;
  @Required() @Nullable(Number) @Description("Raised by every takeover; null on a single box") epoch: number | null;
  @Required()
  @Nullable(LitestreamStateModel)
  @Description("The `litestream replicate` process; null on a single box")
  litestream: LitestreamStateModel | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("The newest beacon this box committed")
  beacon_written_at: string | null;
  @Required()
  @Nullable(StandbyViewModel)
  @Description("The standby as this active box sees it; null on a single box")
  standby: StandbyViewModel | null;
}

export class ReadinessCountsModel {
  @Required()
  @Integer()
  @Description("Webhook deliveries waiting; -1 when the journal cannot be read")
  outbox_pending: number;
  @Required() @Integer() throttled_addresses: number;
  @Required() @Integer() @Description("Schedules with a gap in the next 14 days") schedule_gaps: number;
  @Required() @Integer() mqtt_brokers: number;
  @Required() @Integer() mqtt_brokers_down: number;
  @Required() @Integer() plc_links: number;
  @Required() @Integer() @Description("Modbus or OPC UA devices not answering now") plc_links_unreachable: number;
  @Required()
  @Integer()
  @Description('Integrations with unmapped: "keep" that kept unmapped messages in the last 24 hours; a warning')
  unmapped_kept: number;
}

/**
 * The body of /readyz, the same with 200 and 503. Without a key: status, ready, reasons, the
 * journal's can_commit, channels (no details), undeliverable and counts. The rest needs a key
 * with notifications:read (or a dashboard session).
 */
export class ReadinessModel {
  @Required() @Enum("ready", "unready") status: string;
  @Required() @Description("The journal can commit and no open notification is undeliverable") ready: boolean;
  @Required()
  @CollectionOf(String)
  @Description("Why the gateway is unready, in words; empty when ready")
  reasons: string[];
  @Required() counts: ReadinessCountsModel;
  @Required() journal: JournalReadinessModel;
  @Required() @CollectionOf(ChannelStateModel) channels: ChannelStateModel[];
  @Description("With a key only") outbox?: OutboxReadinessModel;
  @Description("With a key only") disk?: DiskReadinessModel;
  @Description("The heartbeat sweep; a failed last pass makes the gateway unready. With a key only")
  heartbeats?: SweepModel;
  @Description(
    "The sweep that releases what a maintenance window held once it ends; a failed last pass makes the gateway unready. With a key only"
  )
  maintenance?: SweepModel;
  @Description(
    "The paging auditor, which checks every 5 s that each open alert had a page carried in time; a failed last pass makes the gateway unready. With a key only"
  )
  auditor?: SweepModel;
  @Required() undeliverable: UndeliverableModel;
  @CollectionOf(String)
  @Description(
    "Client addresses over their budget of failed authentications: their new failing credentials get 429, valid ones still pass. Does not make the gateway unready. With a key only"
  )
  throttled_addresses?: string[];
  @CollectionOf(ScheduleGapModel)
  @Description(
    "On-call schedules with nobody on call some time in the next 14 days, each with its first gap. Does not make the gateway unready. With a key only"
  )
  schedule_gaps?: ScheduleGapModel[];
  @CollectionOf(UnmappedWarningModel)
  @Description(
    'Device integrations with unmapped: "keep" that kept messages no rule maps in the last 24 hours: nobody was paged for them. A warning, not unready. With a key only'
  )
  unmapped_kept?: UnmappedWarningModel[];
  @CollectionOf(MqttBrokerStateModel)
  @Description("Each MQTT integration's broker connection. Does not make the gateway unready. With a key only")
  mqtt_brokers?: MqttBrokerStateModel[];
  @CollectionOf(PlcLinkStateModel)
  @Description(
    "Each modbus or opcua integration's device link; an unreachable one pages its target after unreachable_after_seconds. Does not make the gateway unready. With a key only"
  )
  plc_links?: PlcLinkStateModel[];
  @CollectionOf(ParserWorkerModel)
  @Description("The supervised parsers of device input (SNMP...). Does not make the gateway unready. With a key only")
  parser_workers?: ParserWorkerModel[];
  @CollectionOf(PlanWarningModel)
  @Description(
    "Recipients or groups some priority would page on no channel on this box, and contacts for channels this box has not configured (left out of plans). Does not make the gateway unready. With a key only"
  )
  plan_warnings?: PlanWarningModel[];
  @Description(
    "Two boxes (docs/high-availability.md): this box's role and its Litestream. Does not make the gateway unready. With a key only"
  )
  replication?: ReplicationStateModel;
}
