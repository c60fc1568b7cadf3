import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {RateLimiter} from "../../lib/rate-limiter.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import {IntegrationAlertsRepository} from "../../store/journal/integration-alerts.repository.js";
import {IntegrationStatsRepository} from "../../store/journal/integration-stats.repository.js";
import type {HeartbeatsService} from "../heartbeats/heartbeats.service.js";
import type {IdempotencyService} from "../notifications/idempotency.service.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import type {TargetDirectory} from "../recipients/paging-target.js";
import type {AuditService} from "../shared/audit.service.js";
import {DeviceIntake} from "./intake/device-intake.js";
import {IntegrationCredentials} from "./integration-credentials.js";
import {IntegrationEvents} from "./intake/integration-events.js";
import {IntegrationsService, type IntegrationsServiceDeps} from "./integrations.service.js";

/** What inbound integrations are built from. */
export interface IntegrationsDependencies {
  integrations: IntegrationsRepository;
  targets: TargetDirectory;
  notificationRecords: NotificationsRepository;
  notifications: NotificationsService;
  heartbeats: HeartbeatsService;
  idempotency: IdempotencyService;
  journal: Journal;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
  /** The HTTP API's rate (settings.rate_limit), which the device transports' senders get too. */
  rateLimit: {per_second: number; burst: number};
  /** The absolute base of integration URLs. */
  publicBase: () => string;
  /** The domain of email integrations' addresses. */
  emailDomain: () => string;
  /** The MQTT clients, which the admin service shows and nudges after each change. */
  mqtt?: IntegrationsServiceDeps["mqtt"];
  /** The PLC links, which the admin service shows and nudges after each change. */
  plc?: IntegrationsServiceDeps["plc"];
}

/**
 * Inbound integrations: the admin service, the HTTP events' credentials and handling, and the
 * intake where device transports (email, MQTT, SNMP traps) hand their messages; `providers` are
 * what the API injects.
 */
export function createIntegrations(deps: IntegrationsDependencies) {
  const {journal, clock} = deps;
  const stats = new IntegrationStatsRepository(journal);
  const service = new IntegrationsService({
    integrations: deps.integrations,
    targets: deps.targets,
    stats,
    journal,
    audit: deps.audit,
    clock,
    publicBase: deps.publicBase,
    emailDomain: deps.emailDomain,
    mqtt: deps.mqtt,
    plc: deps.plc
  });
  const credentials = new IntegrationCredentials(deps.integrations, clock);
  const events = new IntegrationEvents({
    alerts: new IntegrationAlertsRepository(journal),
    notificationRecords: deps.notificationRecords,
    notifications: deps.notifications,
    heartbeats: deps.heartbeats,
    idempotency: deps.idempotency,
    journal,
    clock
  });
  const intake = new DeviceIntake({
    events,
    stats,
    journal,
    limiter: new RateLimiter(deps.rateLimit.per_second, deps.rateLimit.burst, clock),
    clock,
    logger: deps.logger.child({component: "device-intake"})
  });
  return {
    service,
    intake,
    events,
    providers: [
      {token: IntegrationsService, use: service},
      {token: IntegrationCredentials, use: credentials},
      {token: IntegrationEvents, use: events}
    ]
  };
}
