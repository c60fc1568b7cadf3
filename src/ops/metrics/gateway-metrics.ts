import {ATTEMPT_OUTCOMES, CHANNELS, NOTIFICATION_STATUSES, PRIORITIES} from "../../domain/vocabulary.js";
import type {Clock} from "../../lib/clock.js";
import type {Journal} from "../../store/journal/journal.js";
import type {MetricsRepository} from "../../store/journal/metrics.repository.js";
import {INTAKE_OUTCOMES} from "../../store/journal/integration-stats.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import {withAuditFindings, type PagingAuditRepository} from "../../store/journal/paging-audit.repository.js";
import type {EventsRepository} from "../../store/journal/events.repository.js";
import type {ChannelStatusService} from "../../services/shared/channel-status.service.js";
import type {EscalationRunner} from "../../services/escalation/escalation-runner.service.js";
import type {BackupService} from "../backups.js";
import {escalationLagMs} from "../liveness.js";
import {Histogram, renderExposition, type Labels, type MetricFamily, type Sample} from "./exposition.js";
import type {ProcessMetrics} from "./process-metrics.js";
import type {ParserWorkers} from "../../lib/parser-workers.js";
import {parserWorkerFamilies} from "./parser-worker-metrics.js";
import type {PlcLinkState} from "../../services/integrations/plc/plc-links.service.js";

/** The integration kinds whose messages arrive by a transport of their own, and are counted. */
const DEVICE_KINDS = ["email", "mqtt", "snmp_trap", "modbus", "opcua"] as const;

/** Every combination of two label vocabularies, with the journal's count or 0, so series never vanish. */
function grid<A extends string, B extends string>(
  names: [string, string],
  first: readonly A[],
  second: readonly B[],
  counts: Array<Record<string, string | number>>
): Sample[] {
  const found = new Map(counts.map((row) => [`${row[names[0]]}\u0000${row[names[1]]}`, Number(row.n)]));
  return first.flatMap((a) =>
    second.map((b) => ({labels: {[names[0]]: a, [names[1]]: b}, value: found.get(`${a}\u0000${b}`) ?? 0}))
  );
}

/** A driver's details flattened to dotted paths: numbers and booleans as values, strings as info labels. */
function flattenDetails(
  details: Record<string, unknown>,
  prefix = ""
): Array<{detail: string; value: number | string}> {
  return Object.entries(details).flatMap(([key, value]) => {
    const detail = prefix + key;
    if (typeof value === "number" && Number.isFinite(value)) return [{detail, value}];
    if (typeof value === "boolean") return [{detail, value: value ? 1 : 0}];
    if (typeof value === "string") return [{detail, value}];
    if (value && typeof value === "object" && !Array.isArray(value))
      return flattenDetails(value as Record<string, unknown>, detail + ".");
    return [];
  });
}

/** What GatewayMetrics works with, by name. */
export interface GatewayMetricsDeps {
  journal: Journal;
  counts: MetricsRepository;
  escalations: EscalationsRepository;
  auditFindings: PagingAuditRepository;
  events: EventsRepository;
  channels: ChannelStatusService;
  runner: EscalationRunner;
  backups: BackupService;
  clock: Clock;
  process: ProcessMetrics;
  parserWorkers: ParserWorkers;
  /** Each modbus or opcua integration's device link. */
  plcLinks: () => PlcLinkState[];
}

/**
 * What /metrics reports: read from the journal and the live services at scrape time, so the
 * numbers are the same ones the API shows. Counts of notifications and attempts are gauges of
 * rows in the journal (retention pruning lowers them), not counters since start.
 */
export class GatewayMetrics {
  readonly http = new Histogram();

  constructor(private readonly deps: GatewayMetricsDeps) {}

  /** Records one answered HTTP request; `route` is the endpoint's template, never a raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({method, route, status: String(status)}, seconds);
  }

  async render(): Promise<string> {
    const nowMs = this.deps.clock.now();
    const backups = await this.deps.backups.list();
    const {notifications, attempts, running, lagMs, outbox, undeliverable, intake} = this.deps.journal.read(() => ({
      notifications: this.deps.counts.notificationsByStatusAndPriority(),
      intake: this.deps.counts.integrationMessagesByKindAndOutcome(),
      attempts: this.deps.counts.attemptsByChannelAndOutcome(),
      running: this.deps.counts.runningEscalations(),
      lagMs: escalationLagMs(this.deps.journal, this.deps.escalations, nowMs),
      outbox: this.deps.events.backlog(),
      undeliverable: withAuditFindings(this.deps.escalations.undeliverable(), this.deps.auditFindings.findings())
    }));
    const states = this.deps.channels.all();
    const details = states.flatMap((state) =>
      state.details ? flattenDetails(state.details).map((item) => ({...item, channel: state.channel})) : []
    );
    const byChannel = (value: (channel: (typeof CHANNELS)[number]) => number): Sample[] =>
      CHANNELS.map((channel) => ({labels: {channel}, value: value(channel)}));
    const families: MetricFamily[] = [
      {
        name: "klaxon_notifications",
        type: "gauge",
        help: "Notifications in the journal by status and priority.",
        samples: grid(["status", "priority"], NOTIFICATION_STATUSES, PRIORITIES, notifications)
      },
      {
        name: "klaxon_attempts",
        type: "gauge",
        help: "Delivery attempts in the journal by channel and outcome.",
        samples: grid(["channel", "outcome"], CHANNELS, ATTEMPT_OUTCOMES, attempts)
      },
      {
        name: "klaxon_notifications_undeliverable",
        type: "gauge",
        help: "Open notifications waiting for a channel they cannot use now, or found by the paging auditor with no page carried in time (unlabelled: the total; by channel: waiting for that channel, so one may count on several; see /readyz for the reasons).",
        samples: [
          {value: undeliverable.count},
          ...byChannel((channel) =>
            undeliverable.reasons
              .filter((entry) => entry.channel === channel)
              .reduce((sum, entry) => sum + entry.notifications, 0)
          )
        ]
      },
      {
        name: "klaxon_integration_messages_total",
        type: "counter",
        help: "Messages the device integrations (email, MQTT, SNMP traps, PLC alarms) received, by kind and outcome (accepted, unmapped: kept in the log, refused).",
        samples: grid(["kind", "outcome"], DEVICE_KINDS, INTAKE_OUTCOMES, intake)
      },
      {
        name: "klaxon_escalations_running",
        type: "gauge",
        help: "Escalation chains still running.",
        samples: [{value: running}]
      },
      {
        name: "klaxon_escalation_lag_seconds",
        type: "gauge",
        help: "How late the most overdue escalation step is (0 when every due step has fired).",
        samples: [{value: lagMs / 1000}]
      },
      {
        name: "klaxon_outbox_pending",
        type: "gauge",
        help: "Webhook deliveries waiting to be sent.",
        samples: [{value: outbox.pending}]
      },
      {
        name: "klaxon_outbox_oldest_age_seconds",
        type: "gauge",
        help: "Age of the oldest webhook delivery waiting (0 when none waits).",
        samples: [{value: outbox.oldest === null ? 0 : Math.max(0, (nowMs - Date.parse(outbox.oldest)) / 1000)}]
      },
      {
        name: "klaxon_channel_available",
        type: "gauge",
        help: "1 when the gateway can use the channel now, 0 when not (see /readyz for the reason).",
        samples: byChannel((channel) => (states.find((state) => state.channel === channel)?.available ? 1 : 0))
      },
      {
        name: "klaxon_channel_queue_depth",
        type: "gauge",
        help: "Deliveries waiting for the channel's driver.",
        samples: byChannel((channel) => this.deps.runner.queueDepth(channel))
      },
      {
        name: "klaxon_channel_detail",
        type: "gauge",
        help: "Numeric live details a channel driver reports (modem signal.dbm, port_open...).",
        samples: details
          .filter((item) => typeof item.value === "number")
          .map((item) => ({labels: {channel: item.channel, detail: item.detail}, value: item.value as number}))
      },
      {
        name: "klaxon_channel_detail_info",
        type: "gauge",
        help: "Textual live details a channel driver reports (modem sim, registration, operator...), as labels; always 1.",
        samples: details
          .filter((item) => typeof item.value === "string")
          .map((item) => ({
            labels: {channel: item.channel, detail: item.detail, value: item.value as string} satisfies Labels,
            value: 1
          }))
      },
      {
        name: "klaxon_journal_can_commit",
        type: "gauge",
        help: "0 after a commit failed for lack of storage (disk full), until one succeeds again.",
        samples: [{value: this.deps.journal.isStorageFailing ? 0 : 1}]
      },
      {
        name: "klaxon_journal_commits_total",
        type: "counter",
        help: "Journal transactions committed since start.",
        samples: [{value: this.deps.journal.stats.commits}]
      },
      {
        name: "klaxon_journal_writes_total",
        type: "counter",
        help: "Writes committed since start (writes per commit is the group-commit factor).",
        samples: [{value: this.deps.journal.stats.writes}]
      },
      {
        name: "klaxon_journal_syncs_total",
        type: "counter",
        help: "Flushes of the journal's WAL to disk since start (commits per flush: their group-commit factor).",
        samples: [{value: this.deps.journal.syncs}]
      },
      {
        name: "klaxon_backups",
        type: "gauge",
        help: "Backups kept under <data_dir>/backups.",
        samples: [{value: backups.length}]
      },
      {
        name: "klaxon_backup_last_success_timestamp_seconds",
        type: "gauge",
        help: "When the newest backup was made (Unix seconds; 0 when there is none).",
        samples: [{value: backups.length ? Date.parse(backups[0].created_at) / 1000 : 0}]
      },
      {
        name: "klaxon_http_request_duration_seconds",
        type: "histogram",
        help: "HTTP answers by method, endpoint template and status.",
        samples: this.http.samples()
      },
      ...this.deps.process.families(),
      ...parserWorkerFamilies(this.deps.parserWorkers),
      {
        name: "klaxon_plc_link_up",
        type: "gauge",
        help: "1 while a modbus or opcua integration's device answers, 0 while it is unreachable.",
        samples: this.deps.plcLinks().map((link) => ({
          labels: {integration: link.name, kind: link.kind},
          value: link.state === "connected" ? 1 : 0
        }))
      }
    ];
    return renderExposition(families);
  }
}
