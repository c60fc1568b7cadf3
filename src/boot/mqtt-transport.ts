import {MqttConnections} from "../inbound/mqtt/mqtt-connections.js";
import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import type {IntegrationEvents} from "../services/integrations/intake/integration-events.js";
import {MqttIntake} from "../services/integrations/mqtt/mqtt-intake.js";
import {SupervisedMqttMapper} from "../services/integrations/mqtt/mqtt-mapper.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";

/** The MQTT integrations' clients and the intake they hand messages to. */
export interface MqttTransport {
  connections: MqttConnections;
  /** The payload mapping's supervised worker (started with the first message). */
  mapper: SupervisedMqttMapper;
  /** Starts, restarts or stops clients to match the integrations now stored. */
  sync(): Promise<void>;
  /** Disconnects every client (keeping their sessions), then ends the mapping worker. */
  stop(): Promise<void>;
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
  const mapper = new SupervisedMqttMapper(logger.child({component: "mqtt-mapper"}));
  const mqttIntake = new MqttIntake({
    integrations,
    intake,
    map: mapper.map,
    known: (integration, alertId) => events.known(integration, alertId)
  });
  const connections = new MqttConnections(
    (integrationId, message) => mqttIntake.receive(integrationId, message),
    () => new Date(clock.now()),
    logger
  );
  return {
    connections,
    mapper,
    stop: async () => {
      await connections.stop();
      await mapper.stop();
    },
    sync: async () => {
      const endpoints = mqttIntake.endpoints();
      // The mapping worker starts beside the clients (loading it takes a moment): their first
      // messages, a session's queue, wait for it in the mapper rather than for a first message.
      if (endpoints.length) void mapper.start();
      await connections
        .sync(endpoints)
        .catch((error: unknown) =>
          logger.error("mqtt clients could not be updated", {error: (error as Error).message})
        );
    }
  };
}
