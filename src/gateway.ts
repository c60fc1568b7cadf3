import {mkdirSync} from "node:fs";
import {join, resolve} from "node:path";
import type {AddressInfo} from "node:net";
import {Server as HttpServer} from "node:http";
import {PlatformExpress} from "@tsed/platform-express";
import type {PlatformBuilder} from "@tsed/platform-http";
import {Server} from "./server.js";
import type {Settings} from "./settings/defaults.js";
import {createLogger, type Logger} from "./lib/logger.js";
import {systemClock, type Clock} from "./lib/clock.js";
import {PeriodicTask} from "./lib/periodic-task.js";
import {Journal} from "./store/journal/journal.js";
import {NotificationsRepository} from "./store/journal/notifications.repository.js";
import {EscalationsRepository} from "./store/journal/escalations.repository.js";
import {AttemptsRepository} from "./store/journal/attempts.repository.js";
import {AuditRepository} from "./store/journal/audit.repository.js";
import {EventsRepository} from "./store/journal/events.repository.js";
import {IdempotencyRepository} from "./store/journal/idempotency.repository.js";
import {ContactFailuresRepository} from "./store/journal/contact-failures.repository.js";
import {ConfigStore} from "./store/config/config-store.js";
import {ApiKeysRepository, GroupsRepository, RecipientsRepository, WebhooksRepository} from "./store/config/repositories.js";
import {AuditService} from "./services/audit.service.js";
import {ApiKeysService} from "./services/api-keys.service.js";
import {ChannelStatusService} from "./services/channel-status.service.js";
import {RecipientsService} from "./services/recipients.service.js";
import {GroupsService} from "./services/groups.service.js";
import {IdempotencyService} from "./services/idempotency.service.js";
import {NotificationsService} from "./services/notifications.service.js";
import {ReadinessService} from "./services/readiness.service.js";
import {EventPublisher} from "./services/event-publisher.js";
import {EscalationRunner, type RunnerOptions} from "./services/escalation-runner.service.js";
import {ChannelRegistry} from "./channels/channel-registry.js";
import type {ChannelDriver} from "./channels/channel.js";
import {createChannelDrivers} from "./channels/index.js";
import {createWebhooks} from "./outbox/index.js";
import {WebhooksService} from "./services/webhooks.service.js";
import {RateLimiter} from "./api/auth/rate-limiter.js";
import {Runtime} from "./api/runtime.js";
import {jsonBody, requestLog, requireJsonBody} from "./api/http/pipeline.js";

export interface GatewayOptions {
  logger?: Logger;
  clock?: Clock;
  /** Channel drivers instead of the production ones built from settings (tests, development). */
  drivers?: ChannelDriver[];
  runner?: RunnerOptions;
}

export interface Gateway {
  url: string;
  settings: Settings;
  journal: Journal;
  config: ConfigStore;
  services: {keys: ApiKeysService; notifications: NotificationsService; recipients: RecipientsService; groups: GroupsService; runner: EscalationRunner};
  initialAdminKeyFile: string | null;
  stop(): Promise<void>;
}

/** Opens the stores, wires the services, and serves the API. The one place that builds a gateway. */
export async function startGateway(settings: Settings, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(settings.log.level);
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(settings.data_dir);
  mkdirSync(dataDir, {recursive: true, mode: 0o700});

  const config = await ConfigStore.open(join(dataDir, "config.json"));
  const journal = new Journal({path: join(dataDir, "journal.sqlite"), logger, checkpointIntervalMs: settings.journal.checkpoint_interval_ms, maxBatch: settings.journal.max_batch});

  const notificationsRepository = new NotificationsRepository(journal);
  const eventsRepository = new EventsRepository(journal);
  const escalationsRepository = new EscalationsRepository(journal);
  const attemptsRepository = new AttemptsRepository(journal);
  const contactFailures = new ContactFailuresRepository(journal);
  const recipientsRepository = new RecipientsRepository(config);
  const groupsRepository = new GroupsRepository(config);
  const audit = new AuditService(journal, new AuditRepository(journal), clock);
  const registry = new ChannelRegistry(
    options.drivers ??
      createChannelDrivers({
        settings, dataDir, logger, clock, journal,
        // Called only once serving, when `notifications` below exists.
        acknowledgements: {acknowledge: (ids, by, via) => notifications.acknowledgeMany(ids, by, via, {type: "system", id: null})}
      })
  );
  const channelStatus = new ChannelStatusService(settings, registry);
  const webhooks = createWebhooks({journal, config, audit, clock, logger});
  const events = new EventPublisher(eventsRepository, new WebhooksRepository(config), () => webhooks.dispatcher.nudge());
  const keys = new ApiKeysService(new ApiKeysRepository(config), audit, clock, logger);
  const idempotency = new IdempotencyService(journal, new IdempotencyRepository(journal), clock, settings.journal.idempotency_hours);
  const recipients = new RecipientsService(recipientsRepository, groupsRepository, notificationsRepository, channelStatus, contactFailures, audit, clock);
  const groups = new GroupsService(groupsRepository, recipientsRepository, notificationsRepository, audit, clock);
  const notifications = new NotificationsService(
    journal, notificationsRepository, escalationsRepository, attemptsRepository, events, recipientsRepository, groupsRepository, audit, idempotency, clock
  );
  const runner = new EscalationRunner(
    journal, notificationsRepository, escalationsRepository, attemptsRepository, events, audit, notifications, registry, channelStatus, contactFailures, clock, logger, options.runner
  );
  const readiness = new ReadinessService(journal, eventsRepository, channelStatus, clock);
  const runtime = new Runtime(
    settings, logger, clock,
    new RateLimiter(settings.rate_limit.per_second, settings.rate_limit.burst, clock),
    new RateLimiter(settings.rate_limit.auth_failures_per_minute / 60, settings.rate_limit.auth_failures_per_minute, clock)
  );
  const initialAdminKeyFile = await keys.ensureInitialAdminKey(dataDir);
  const pruner = new PeriodicTask("idempotency-prune", 3600_000, () => idempotency.prune(), logger);

  let platform: PlatformBuilder;
  try {
    platform = await PlatformExpress.bootstrap(Server, {
      httpPort: `${settings.host}:${settings.port}`,
      httpsPort: false,
      middlewares: [requestLog(logger), requireJsonBody, jsonBody],
      imports: [
        {token: Runtime, use: runtime},
        {token: NotificationsService, use: notifications},
        {token: RecipientsService, use: recipients},
        {token: GroupsService, use: groups},
        {token: ApiKeysService, use: keys},
        {token: AuditService, use: audit},
        {token: ReadinessService, use: readiness},
        {token: WebhooksService, use: webhooks.service}
      ]
    });
    await platform.listen();
  } catch (error) {
    await journal.close();
    throw error;
  }
  pruner.start();
  await registry.start();
  await runner.start();
  await webhooks.dispatcher.start();
  const httpServer = platform.injector.get<HttpServer>(HttpServer) as HttpServer;
  const address = httpServer.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
  logger.info("gateway serving", {url, data_dir: dataDir});

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // Stop accepting, let requests in flight finish (their commits included), then close the journal.
      await new Promise<void>((done) => {
        httpServer.close(() => done());
        httpServer.closeIdleConnections();
      });
      await pruner.stop();
      await runner.stop();
      await registry.stop();
      // Before the journal closes: the dispatcher records requests it interrupts.
      await webhooks.dispatcher.stop();
      await platform.stop();
      await journal.close();
      logger.info("gateway stopped");
    })();
    return stopping;
  };

  return {url, settings, journal, config, services: {keys, notifications, recipients, groups, runner}, initialAdminKeyFile, stop};
}
