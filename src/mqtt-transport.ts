import {MqttConnections} from "./inbound/mqtt/mqtt-connections.js";
import type {Clock} from "./lib/clock.js";
import type {Logger} from "./lib/logger.js";
import {TimedRegex} from "./lib/timed-regex.js";
import type {DeviceIntake} from "./services/integrations/device-intake.js";
import type {IntegrationEvents} from "./services/integrations/integration-events.js";
import {MqttIntake} from "./services/integrations/mqtt-intake.js";
import type {IntegrationsRepository} from "./store/config/repositories.js";

/** The MQTT integrations' clients and the intake they hand messages to. */
export interface MqttTransport {
  connections: MqttConnections;
  /** Starts, restarts or stops clients to match the integrations now stored. */
  sync(): Promise<void>;
}

/** What the MQTT transport is wired to. */
export interface MqttTransportDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  /** Tells a retained copy of a known alert from news. */
  events: IntegrationEvents;
  clock: Clock;
}

/**
 * Wires one MQTT client per mqtt integration to the intake: a message is acknowledged to the
 * broker once `MqttIntake.receive` has committed it. Call `sync()` at start and after every
 * change to the integrations.
 */
export function createMqttTransport(deps: MqttTransportDeps, logger: Logger): MqttTransport {
  const {integrations, intake, events, clock} = deps;
  const regex = new TimedRegex();
  const mqttIntake = new MqttIntake({
    integrations,
    intake,
    matcher: (pattern, text) => regex.match(pattern, text),
    known: (integration, alertId) => events.known(integration, alertId)
  });
  const connections = new MqttConnections(
    (integrationId, message) => mqttIntake.receive(integrationId, message),
    () => new Date(clock.now()),
    logger
  );
  return {
    connections,
    sync: () =>
      connections
        .sync(mqttIntake.endpoints())
        .catch((error: unknown) => logger.error("mqtt clients could not be updated", {error: (error as Error).message}))
  };
}
