import {join} from "node:path";
import type {PlcLinkState} from "../services/integrations/plc/plc-links.service.js";
import type {Settings} from "../settings/defaults.js";
import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import type {Journal} from "../store/journal/journal.js";
import type {EscalationsRepository} from "../store/journal/escalations.repository.js";
import type {EventsRepository} from "../store/journal/events.repository.js";
import type {NotificationsRepository} from "../store/journal/notifications.repository.js";
import {MetricsRepository} from "../store/journal/metrics.repository.js";
import {RetentionRepository} from "../store/journal/retention.repository.js";
import type {GroupsRepository, RecipientsRepository, SchedulesRepository} from "../store/config/repositories.js";
import type {ChannelRegistry} from "../channels/channel-registry.js";
import type {ChannelStatusService} from "../services/shared/channel-status.service.js";
import type {EscalationRunner} from "../services/escalation/escalation-runner.service.js";
import type {NotificationsService} from "../services/notifications/notifications.service.js";
import {PagingAuditor} from "../services/auditor/paging-auditor.service.js";
import {PagingAuditRepository} from "../store/journal/paging-audit.repository.js";
import {RetentionService} from "../services/operations/retention.service.js";
import {SelfMonitorService} from "../services/operations/self-monitor.service.js";
import {AuditService} from "../services/shared/audit.service.js";
import {AuditRepository} from "../store/journal/audit.repository.js";
import {BackupService} from "./backups.js";
import {BackupSchedule} from "./backup-schedule.js";
import {boxTimeZone} from "./box-zone.js";
import {DataDirLock} from "./data-dir-lock.js";
import {LivenessProbe} from "./liveness.js";
import {GatewayMetrics} from "./metrics/gateway-metrics.js";
import {ProcessMetrics, readBuildInfo} from "./metrics/process-metrics.js";
import {Replication} from "./replication/replication.js";
import {BACKUP_FILES} from "./backup-layout.js";
import type {ReplicationRepository} from "../store/journal/replication.repository.js";
import type {ParserWorkers} from "../lib/parser-workers.js";

/** What the operations pieces are built from: the gateway's own stores and services. */
export interface OperationsContext {
  settings: Settings;
  dataDir: string;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  registry: ChannelRegistry;
  channelStatus: ChannelStatusService;
  runner: EscalationRunner;
  notifications: NotificationsService;
  repositories: {
    notifications: NotificationsRepository;
    escalations: EscalationsRepository;
    events: EventsRepository;
    recipients: RecipientsRepository;
    groups: GroupsRepository;
    schedules: SchedulesRepository;
  };
  /** The replicated documents and beacon; null on a single box. */
  replication: ReplicationRepository | null;
  /** The supervised parser workers of the device doors, for /metrics. */
  parserWorkers: ParserWorkers;
  /** The PLC integrations' device links, for /metrics. */
  plcLinks: () => PlcLinkState[];
}

const RETENTION_INTERVAL_MS = 3600_000;

/**
 * Running the appliance: metrics, backups (on demand and nightly), retention pruning,
 * self-monitoring, the paging auditor, the liveness probe behind systemd's watchdog, and the data dir's pid file.
 */
export function createOperations(context: OperationsContext) {
  const {settings, dataDir, journal, clock, logger, repositories} = context;
  const backups = new BackupService({
    dataDir,
    journal,
    clock,
    logger,
    keep: settings.backup.keep,
    audit: new AuditService(journal, new AuditRepository(journal), clock)
  });
  // The box's own zone (TZ, else /etc/localtime), as the system cron would read the expression.
  const boxZone = boxTimeZone();
  const schedule = new BackupSchedule({expression: settings.backup.schedule, zone: boxZone, backups, clock, logger});
  const processMetrics = new ProcessMetrics(readBuildInfo());
  const auditFindings = new PagingAuditRepository(journal);
  const auditor = new PagingAuditor({
    journal,
    findings: auditFindings,
    clock,
    logger,
    deadlineSeconds: settings.paging.first_attempt_deadline_seconds,
    // The webhooks hear of it; nobody is paged by the auditor.
    announce: (id, reason, nowMs) => context.notifications.announceUndeliverable(id, reason, nowMs)
  });
  const metrics = new GatewayMetrics({
    journal,
    counts: new MetricsRepository(journal),
    escalations: repositories.escalations,
    auditFindings,
    events: repositories.events,
    channels: context.channelStatus,
    runner: context.runner,
    backups,
    clock,
    process: processMetrics,
    parserWorkers: context.parserWorkers,
    plcLinks: context.plcLinks
  });
  const retention = new RetentionService({
    journal,
    retention: new RetentionRepository(journal),
    days: settings.retention,
    clock,
    logger
  });
  const replication = new Replication({
    settings,
    dataDir,
    journalPath: join(dataDir, BACKUP_FILES.journal),
    repository: context.replication,
    clock,
    logger
  });
  const selfMonitor = new SelfMonitorService({
    settings: settings.self_monitoring,
    journal,
    notifications: context.notifications,
    notificationRecords: repositories.notifications,
    escalations: repositories.escalations,
    auditFindings,
    events: repositories.events,
    channelStatus: context.channelStatus,
    registry: context.registry,
    recipients: repositories.recipients,
    groups: repositories.groups,
    schedules: repositories.schedules,
    clock,
    logger,
    replication: () => replication.health()
  });
  if (!(settings.self_monitoring.interval_seconds >= 1))
    throw new Error(
      `self_monitoring.interval_seconds: must be at least 1, got ${settings.self_monitoring.interval_seconds}`
    );
  const tasks = [
    new PeriodicTask("retention", RETENTION_INTERVAL_MS, () => retention.prune(), logger),
    new PeriodicTask(
      "self-monitoring",
      settings.self_monitoring.interval_seconds * 1000,
      () => selfMonitor.tick(),
      logger
    )
  ];
  let lock: DataDirLock | null = null;
  // Shaped as the API pipeline's RequestObserver, which ops/ does not import: the edge sits above it.
  const observeRequest = (method: string, route: string, status: number, seconds: number): void =>
    metrics.observeRequest(method, route, status, seconds);

  return {
    backups,
    metrics,
    retention,
    selfMonitor,
    replication,
    /** The paging auditor, and the findings table the loud signals count. */
    auditor,
    auditFindings,
    liveness: new LivenessProbe(journal, repositories.escalations, clock),
    observeRequest,
    /** Values the controllers inject. */
    providers: [
      {token: BackupService, use: backups},
      {token: GatewayMetrics, use: metrics},
      {token: Replication, use: replication}
    ],
    /** Once serving: marks the data dir in use and starts the background work and replication. */
    async start(): Promise<void> {
      lock = DataDirLock.acquire(dataDir);
      if (!selfMonitor.enabled) logger.info("self-monitoring is off (self_monitoring.recipient is empty)");
      for (const task of tasks) task.start();
      await auditor.start();
      schedule.start();
      processMetrics.start();
      await replication.start();
    },
    /** Before the journal closes. */
    async stop(): Promise<void> {
      processMetrics.stop();
      schedule.stop();
      await replication.stopBeacon();
      await Promise.all([...tasks.map((task) => task.stop()), auditor.stop()]);
    },
    /** After the journal has closed: Litestream ships the last commits and ends; offline tools may now use the data dir. */
    async releaseDataDir(): Promise<void> {
      await replication.stopLitestream();
      lock?.release();
      lock = null;
    }
  };
}

export type Operations = ReturnType<typeof createOperations>;
