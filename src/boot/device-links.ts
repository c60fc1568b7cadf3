import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {IntegrationRecord} from "../store/config/config-store.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import type {IntegrationEvents} from "../services/integrations/intake/integration-events.js";
import type {PlcLink} from "../services/integrations/plc/plc-link.js";
import {PlcLinksService} from "../services/integrations/plc/plc-links.service.js";
import {createMqttTransport, type MqttTransport} from "./mqtt-transport.js";

/** What the device links (MQTT clients, PLC links) are wired to. */
export interface DeviceLinksDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  events: IntegrationEvents;
  clock: Clock;
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
  const {integrations, intake, events, clock} = deps;
  const plcLogger = logger.child({component: "plc"});
  const linkFor = async (integration: IntegrationRecord): Promise<PlcLink> => {
    const linkLogger = plcLogger.child({integration: integration.name});
    if (integration.kind === "modbus") {
      const {createModbusLink} = await import("../services/integrations/modbus/modbus-link.js");
      return createModbusLink(integration, {clock, logger: linkLogger});
    }
    return openOpcUaLink(integration);
  };
  return new PlcLinksService(
    {
      integrations,
      intake,
      clock,
      linkFor,
      known: (integration, alertId) => events.known(integration, alertId),
      acknowledge: (integration, alertId, by) => events.acknowledge(integration, alertId, by)
    },
    plcLogger
  );
}

/**
 * THE PLACE FOR THE OPC UA LINK (issue 35, PLC-INTERFACE.md): once
 * services/integrations/opcua/opcua-link.ts is on main, import it here lazily and map
 * integration.opcua and its points onto its OpcUaLinkConfig. Until then an opcua integration is
 * accepted and shown, and its link reports why it cannot start (unreachable, paged in time).
 */
function openOpcUaLink(integration: IntegrationRecord): Promise<PlcLink> {
  const endpoint = integration.opcua?.endpoint_url ?? "no endpoint";
  return Promise.reject(new Error(`OPC UA links are not in this build yet (${endpoint})`));
}
