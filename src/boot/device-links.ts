import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {IntegrationRecord} from "../store/config/config-store.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import type {IntegrationEvents} from "../services/integrations/intake/integration-events.js";
import type {PlcLink} from "../services/integrations/plc/plc-link.js";
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
export function createDeviceLinks(deps: DeviceLinksDeps, logger: Logger): {mqtt: MqttTransport; plc: PlcLinksService} {
  return {mqtt: createMqttTransport(deps, logger), plc: createPlcTransport(deps, logger)};
}

/**
 * The PLC integrations' links (one per modbus or opcua integration) and their watches. A link's
 * driver (modbus-serial, node-opcua) is loaded only when an integration of its kind exists: an
 * idle gateway carries neither (issue 36, docs/benchmarks.md).
 */
function createPlcTransport(deps: DeviceLinksDeps, logger: Logger): PlcLinksService {
  const {integrations, intake, events, clock, audit} = deps;
  const plcLogger = logger.child({component: "plc"});
  const linkFor = async (integration: IntegrationRecord): Promise<PlcLink> => {
    const linkLogger = plcLogger.child({integration: integration.name});
    if (integration.kind === "modbus") {
      const {createModbusLink} = await import("../services/integrations/modbus/modbus-link.js");
      return createModbusLink(integration, {clock, logger: linkLogger});
    }
    const {createOpcUaLink} = await import("../services/integrations/opcua/opcua-link.js");
    const opcua = integration.opcua!;
    const points = (integration.points ?? []).map((point) => ({name: point.name, nodeId: point.node_id ?? ""}));
    return createOpcUaLink(
      {
        endpointUrl: opcua.endpoint_url,
        securityMode: opcua.security_mode,
        securityPolicy: opcua.security_policy,
        user: opcua.user ?? null,
        password: opcua.password ?? null,
        alarms: opcua.alarms,
        points
      },
      {clock, log: linkLogger, dataDir: deps.dataDir}
    );
  };
  return new PlcLinksService(
    {
      integrations,
      intake,
      clock,
      audit,
      linkFor,
      unresolved: (integration, alertId) => events.unresolved(integration, alertId),
      acknowledge: (integration, alertId, by, note) => events.acknowledge(integration, alertId, by, note),
      retitle: (integration, alertId, change) => events.retitle(integration, alertId, change),
      acknowledgement: (integration, alertId) => events.acknowledgement(integration, alertId)
    },
    plcLogger
  );
}
