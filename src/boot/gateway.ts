import {join, resolve} from "node:path";
import {openHttpFront, type HttpFront} from "../server.js";
import type {Settings} from "../settings/defaults.js";
import {createLogger} from "../lib/logger.js";
import {systemClock} from "../lib/clock.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import {NotificationsRepository} from "../store/journal/notifications.repository.js";
import {EscalationsRepository} from "../store/journal/escalations.repository.js";
import {AttemptsRepository} from "../store/journal/attempts.repository.js";
import {AuditRepository} from "../store/journal/audit.repository.js";
import {EventsRepository} from "../store/journal/events.repository.js";
import {IdempotencyRepository} from "../store/journal/idempotency.repository.js";
import {TailRecoveryService} from "../services/notifications/tail-recovery.service.js";
import {ContactFailuresRepository} from "../store/journal/contact-failures.repository.js";
import {openStores} from "../store/open-stores.js";
import {
  ApiKeysRepository,
  GroupsRepository,
  RecipientsRepository,
  WebhooksRepository
} from "../store/config/repositories.js";
import {AuditService} from "../services/shared/audit.service.js";
import {ApiKeysService, INITIAL_ADMIN_KEY_FILE} from "../services/keys/api-keys.service.js";
import {ChannelStatusService} from "../services/shared/channel-status.service.js";
import {createDirectory} from "../services/recipients/directory.js";
import {configurationWarnings} from "../services/recipients/paging-target.js";
import {IdempotencyService} from "../services/notifications/idempotency.service.js";
import {NotificationsService} from "../services/notifications/notifications.service.js";
import {ReadinessService} from "../services/operations/readiness.service.js";
import {EventPublisher} from "../services/notifications/event-publisher.js";
import {NotificationViews} from "../services/notifications/notification-view.js";
import {PagingPolicies} from "../services/recipients/paging-policies.js";
import {StormGrouping} from "../services/notifications/storm-grouping.js";
import {EscalationRunner} from "../services/escalation/escalation-runner.service.js";
import {ChannelRegistry} from "../channels/channel-registry.js";
import {createChannelDrivers} from "../channels/index.js";
import {AckLinkSigner} from "../lib/ack-link.js";
import {AckLinksService} from "../services/notifications/ack-links.service.js";
import {createWebhooks} from "../outbox/index.js";
import {WebhooksService} from "../services/webhooks/webhooks.service.js";
import {HeartbeatStatesRepository} from "../store/journal/heartbeat-states.repository.js";
import {ChannelMessagePreviewer} from "../channels/message-preview.js";
import {MaintenanceWindowsRepository} from "../store/journal/maintenance-windows.repository.js";
import {createMaintenance, MaintenanceService} from "../services/maintenance/index.js";
import {HeartbeatsService} from "../services/heartbeats/heartbeats.service.js";
import {createHeartbeats} from "../services/heartbeats/index.js";
import {createIntegrations} from "../services/integrations/index.js";
import {createDeviceLinks} from "./device-links.js";
import {inboundEmailDomain, startDeviceListeners} from "./device-transports.js";
import {RemoteControlService} from "../services/remote-control/remote-control.service.js";
import {Runtime} from "../api/runtime.js";
import {requestRecorder} from "../api/http/pipeline.js";
import {createDashboard} from "../dashboard/index.js";
import {createOperations} from "../ops/index.js";
import {BACKUP_FILES, OPTIONAL_BACKUP_FILES} from "../ops/backup-layout.js";
import {StartFootprint} from "../store/start-footprint.js";
import {ParserWorkers} from "../lib/parser-workers.js";
import {JOURNAL_FILE_SUFFIXES} from "../store/journal/wal-guard.js";
import type {Gateway, GatewayOptions} from "./gateway-contract.js";

export type {Gateway, GatewayOptions} from "./gateway-contract.js";

/** Opens the stores, wires the services, and serves the API. The one place that builds a gateway. */
export async function startGateway(settings: Settings, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(settings.log.level);
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(settings.data_dir);
  const journalPath = join(dataDir, BACKUP_FILES.journal);
  // What this start may add before it serves: a failed bind takes back what it made.
  const footprint = StartFootprint.create(dataDir, [
    OPTIONAL_BACKUP_FILES.ackLinkKey,
    BACKUP_FILES.config,
    `${BACKUP_FILES.config}.bak`,
    ...JOURNAL_FILE_SUFFIXES.map((suffix) => BACKUP_FILES.journal + suffix),
    INITIAL_ADMIN_KEY_FILE
  ]);

  const {journal, config, ackLinkKey, replication, journalRecord} = await openStores(
    settings,
    {
      journal: journalPath,
      config: join(dataDir, BACKUP_FILES.config),
      ackLinkKey: join(dataDir, OPTIONAL_BACKUP_FILES.ackLinkKey)
    },
    {logger, acceptWalLoss: options.acceptWalLoss, acceptJournalLoss: options.acceptJournalLoss}
  );
  const ackLinkSigner = new AckLinkSigner(ackLinkKey, clock, {
    publicUrl: settings.public_url,
    lifetimeDays: settings.smtp.ack_link_days
  });

  const notificationsRepository = new NotificationsRepository(journal);
  const eventsRepository = new EventsRepository(journal);
  const escalationsRepository = new EscalationsRepository(journal);
  const attemptsRepository = new AttemptsRepository(journal);
  const contactFailures = new ContactFailuresRepository(journal);
  const recipientsRepository = new RecipientsRepository(config);
  const groupsRepository = new GroupsRepository(config);
  const audit = new AuditService(journal, new AuditRepository(journal), clock);
  const remoteControl = new RemoteControlService({
    journal,
    recipients: recipientsRepository,
    records: notificationsRepository,
    audit,
    // Called only once serving, when `notifications` below exists.
    lifecycle: {acknowledge: (...a) => notifications.acknowledge(...a), resolve: (...a) => notifications.resolve(...a)}
  });
  const registry = new ChannelRegistry(
    options.drivers ??
      (await createChannelDrivers({
        settings,
        dataDir,
        logger,
        clock,
        journal,
        ackLinks: ackLinkSigner,
        // Called only once serving, when `notifications` below exists.
        acknowledgements: {
          acknowledge: (ids, by, via, contacts = []): Promise<void> =>
            notifications.acknowledgeMany(ids, by, via, recipients.actorFor(via, contacts))
        },
        remoteControl
      }))
  );
  const channelStatus: ChannelStatusService = new ChannelStatusService(settings, registry);
  const webhooks = createWebhooks({
    journal,
    config,
    audit,
    clock,
    logger,
    destinations: {allowLinkLocal: settings.webhooks.allow_link_local}
  });
  const maintenanceWindows = new MaintenanceWindowsRepository(journal);
  const views = new NotificationViews({
    escalations: escalationsRepository,
    attempts: attemptsRepository,
    windows: maintenanceWindows,
    recovered: (id) => notificationsRepository.recovered(id)
  });
  const events = new EventPublisher({
    journal,
    events: eventsRepository,
    webhooks: new WebhooksRepository(config),
    views,
    onQueued: () => webhooks.dispatcher.nudge()
  });
  const keys = new ApiKeysService(new ApiKeysRepository(config), audit, clock, logger);
  const idempotency = new IdempotencyService(
    journal,
    new IdempotencyRepository(journal),
    clock,
    settings.journal.idempotency_hours
  );
  // Ping, integration and feed URLs are absolute: the configured public URL, else the address served on.
  let servingUrl = "";
  const publicBase = () => settings.public_url || servingUrl;
  const directory = createDirectory({
    config,
    recipients: recipientsRepository,
    groups: groupsRepository,
    notifications: notificationsRepository,
    channelStatus,
    registry,
    contactFailures,
    audit,
    clock,
    publicBase,
    logger,
    previewer: new ChannelMessagePreviewer({
      smsMaxParts: settings.modem.sms_max_parts,
      keys: {acknowledge: settings.modem.ack_key, repeat: settings.modem.repeat_key, passOn: settings.modem.pass_key},
      voice: settings.telegram.voice,
      publicBase
    })
  });
  const {recipients, groups, repositories} = directory;
  const storms = new StormGrouping(journal, escalationsRepository, settings.storm.max_join_delay_seconds * 1000);
  const box = channelStatus.missingSetting.bind(channelStatus);
  const policies = new PagingPolicies({targets: directory.repositories, clock, box});
  const notifications = new NotificationsService({
    journal,
    notifications: notificationsRepository,
    escalations: escalationsRepository,
    events,
    views,
    policies,
    audit,
    idempotency,
    storms,
    windows: maintenanceWindows,
    clock
  });
  const runner = new EscalationRunner(
    {
      journal,
      notificationRecords: notificationsRepository,
      escalations: escalationsRepository,
      attempts: attemptsRepository,
      events,
      audit,
      acknowledgements: notifications,
      policies,
      registry,
      channelStatus,
      contactFailures,
      storms,
      clock,
      logger
    },
    options.runner
  );
  const {service: heartbeats, monitor: heartbeatMonitor} = createHeartbeats(
    {
      definitions: directory.repositories.heartbeats,
      states: new HeartbeatStatesRepository(journal),
      targets: directory.repositories,
      notifications,
      chains: escalationsRepository,
      journal,
      audit,
      clock,
      publicBase
    },
    logger
  );
  const integrations = createIntegrations({
    integrations: repositories.integrations,
    targets: directory.repositories,
    notificationRecords: notificationsRepository,
    notifications,
    heartbeats,
    idempotency,
    journal,
    audit,
    clock,
    logger,
    rateLimit: settings.rate_limit,
    publicBase,
    emailDomain: () => inboundEmailDomain(settings),
    // Called only once serving, when `mqtt` and `plc` below exist.
    mqtt: {connection: (id) => mqtt.connections.state(id), changed: () => void mqtt.sync()},
    plc: {state: (id) => plc.state(id), changed: () => void plc.sync(), readNow: (id) => plc.readNow(id)}
  });
  const links = {...integrations, integrations: repositories.integrations, clock, dataDir, audit};
  const {mqtt, plc, plcWorkers} = createDeviceLinks(links, logger);
  const maintenance = createMaintenance(
    {journal, windows: maintenanceWindows, notifications, directory: directory.repositories, audit, clock},
    logger
  );
  const runtime = Runtime.fromSettings(settings, logger, clock);
  const initialAdminKeyFile = await keys.ensureInitialAdminKey(dataDir);
  const pruner = new PeriodicTask("idempotency-prune", 3600_000, () => idempotency.prune(), logger);
  // The device doors register their parser workers here once they start (below), for /metrics and /readyz.
  const parserWorkers = new ParserWorkers();
  parserWorkers.register("mqtt-mapper", () => mqtt.mapper.report());
  parserWorkers.register("plc-modbus", () => plcWorkers.report("modbus"));
  parserWorkers.register("plc-opcua", () => plcWorkers.report("opcua"));
  const operations = createOperations({
    settings,
    replication,
    parserWorkers,
    plcLinks: () => plc.links(),
    dataDir,
    journal,
    clock,
    logger,
    registry,
    channelStatus,
    runner,
    notifications,
    repositories: {
      notifications: notificationsRepository,
      escalations: escalationsRepository,
      events: eventsRepository,
      recipients: recipientsRepository,
      groups: groupsRepository,
      schedules: directory.repositories.schedules
    }
  });
  const readiness = new ReadinessService({
    journal,
    events: eventsRepository,
    escalations: escalationsRepository,
    channels: channelStatus,
    clock,
    dataDir,
    sweeps: {heartbeats: heartbeatMonitor, maintenance: maintenance.releaser, auditor: operations.auditor},
    schedules: directory.repositories.schedules,
    mqttBrokers: () => mqtt.connections.states(),
    plcLinks: () => plc.links(),
    parserWorkers: () => parserWorkers.reports(),
    planWarnings: () => configurationWarnings(directory.repositories, box),
    unmappedKept: () => integrations.service.unmappedWarnings()
  });
  const dashboard = createDashboard({settings, journal, config, keys, audit, clock, logger});
  const tail = {journal, notifications, records: notificationsRepository, audit, events, clock, logger};

  const providers = [
    {token: Runtime, use: runtime},
    {token: NotificationsService, use: notifications},
    {token: IdempotencyService, use: idempotency},
    ...directory.providers,
    {token: ApiKeysService, use: keys},
    {token: AuditService, use: audit},
    {token: ReadinessService, use: readiness},
    {token: WebhooksService, use: webhooks.service},
    {token: HeartbeatsService, use: heartbeats},
    ...integrations.providers,
    {token: MaintenanceService, use: maintenance.service},
    {token: AckLinksService, use: new AckLinksService(ackLinkSigner, notifications)},
    {token: TailRecoveryService, use: new TailRecoveryService({...tail, documents: replication, settings})},
    ...dashboard.providers,
    ...operations.providers
  ];
  const listenerDeps = {integrations: repositories.integrations, intake: integrations.intake, clock, parserWorkers};
  const listeners = await startDeviceListeners(settings, listenerDeps, logger).catch(async (error: unknown) => {
    await journal.close();
    footprint.undo();
    throw error;
  });
  let front: HttpFront;
  try {
    await operations.replication.claimEpoch();
    front = await openHttpFront(settings, {
      providers,
      statics: dashboard.statics,
      recordRequest: requestRecorder(logger, operations.observeRequest),
      logger
    });
  } catch (error) {
    await listeners.stop();
    await journal.close();
    footprint.undo();
    throw error;
  }
  const {platform, server: httpServer, url} = front;
  pruner.start();
  await registry.start();
  await runner.start();
  await webhooks.dispatcher.start();
  dashboard.feed.start();
  await operations.start();
  await journalRecord?.start();
  logger.info("gateway serving", {url, data_dir: dataDir});
  channelStatus.warnWhenNoneConfigured(logger);
  servingUrl = url;
  // Only now: a heartbeat's fresh grace after a restart counts from the moment the gateway serves.
  await heartbeatMonitor.start();
  await Promise.all([maintenance.releaser.start(), directory.handoffNotices.start()]);
  await Promise.all([mqtt.sync(), plc.start()]);

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // Stop accepting, let requests in flight finish (their commits included), then close the journal.
      // Open dashboard event streams never finish by themselves: end them first.
      await dashboard.feed.stop();
      await listeners.stop();
      await Promise.all([mqtt.stop(), plc.stop()]);
      await new Promise<void>((done) => {
        httpServer.close(() => done());
        httpServer.closeIdleConnections();
      });
      await pruner.stop();
      await heartbeatMonitor.stop();
      await Promise.all([maintenance.releaser.stop(), directory.handoffNotices.stop()]);
      await operations.stop();
      await journalRecord?.stop();
      await runner.stop();
      await registry.stop();
      // Before the journal closes: the dispatcher records requests it interrupts.
      await webhooks.dispatcher.stop();
      await platform.stop();
      await journal.close();
      await operations.releaseDataDir();
      logger.info("gateway stopped");
    })();
    return stopping;
  };

  return {
    url,
    settings,
    journal,
    config,
    services: {keys, notifications, recipients, groups, runner, maintenance, handoffNotices: directory.handoffNotices},
    initialAdminKeyFile,
    operations,
    heartbeats: {service: heartbeats, monitor: heartbeatMonitor},
    webhooks: {dispatcher: webhooks.dispatcher},
    deviceIntake: integrations.intake,
    parserWorkers,
    plcLinkWorkers: plcWorkers,
    stop
  };
}
