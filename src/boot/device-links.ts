import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import type {IntegrationEvents} from "../services/integrations/intake/integration-events.js";
import {PlcLinkWorkers} from "../services/integrations/plc-worker/plc-link-workers.js";
import type {AuditService} from "../services/shared/audit.service.js";
import {PlcLinksService} from "../services/integrations/plc/plc-links.service.js";
import {createMqttTransport, type MqttTransport} from "./mqtt-transport.js";

/** What the device links (MQTT clients, PLC links) are wired to. */
export interface DeviceLinksDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  events: IntegrationEvents;
  clock: Clock;
  /** The OPC UA certificate and trust lists live in its opcua-pki/. */
  dataDir: string;
  audit: AuditService;
}

/** The device integrations' outgoing connections: one MQTT client per mqtt integration, one link per PLC. */
export function createDeviceLinks(
  deps: DeviceLinksDeps,
  logger: Logger
): {mqtt: MqttTransport; plc: PlcLinksService; plcWorkers: PlcLinkWorkers} {
  const {service, workers} = createPlcTransport(deps, logger);
  return {mqtt: createMqttTransport(deps, logger), plc: service, plcWorkers: workers};
}

/**
 * The PLC integrations' links (one per modbus or opcua integration) and their watches. The links
 * run in supervised worker threads, one per kind, started with the first integration of that kind
 * (design rule 14; an idle gateway runs none and loads neither driver: issue 36, docs/benchmarks.md).
 */
function createPlcTransport(
  deps: DeviceLinksDeps,
  logger: Logger
): {service: PlcLinksService; workers: PlcLinkWorkers} {
  const {integrations, intake, events, clock, audit} = deps;
  const plcLogger = logger.child({component: "plc"});
  const workers = new PlcLinkWorkers(deps.dataDir, plcLogger);
  const service = new PlcLinksService(
    {
      integrations,
      intake,
      clock,
      audit,
      links: workers,
      unresolved: (integration, alertId) => events.unresolved(integration, alertId),
      acknowledge: (integration, alertId, by, note) => events.acknowledge(integration, alertId, by, note),
      retitle: (integration, alertId, change) => events.retitle(integration, alertId, change),
      acknowledgement: (integration, alertId) => events.acknowledgement(integration, alertId)
    },
    plcLogger
  );
  return {service, workers};
}
