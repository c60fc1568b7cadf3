import type {MqttEndpoint, MqttIntegrationFields} from "../../../domain/mqtt.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../../store/config/repositories.js";
import {SerialByKey} from "../../../lib/serial-by-key.js";
import type {DeviceIntake, DeviceMessage} from "../intake/device-intake.js";
import type {InboundAction} from "../intake/integration-payloads.js";
import {defaultClientId} from "./mqtt-mapping.js";
import type {MqttMap} from "./mqtt-mapper.js";

/** A payload larger than this is refused and counted; the broker itself drops packets over 1 MiB for us. */
export const MQTT_PAYLOAD_MAX_BYTES = 64 * 1024;

type MqttIntegration = IntegrationRecord & Partial<MqttIntegrationFields>;

/** One MQTT message as the client received it. */
export interface MqttMessage {
  topic: string;
  payload: Buffer;
  /** Handed out by the broker because we subscribed: the topic's last state, perhaps one already acted on. */
  retained: boolean;
}

/** Whether an integration's alert key has ever had an alert (open, acknowledged, exhausted or resolved). */
export type KnownAlert = (integration: IntegrationRecord, alertId: string) => boolean;

/** What the MQTT intake works with. */
export interface MqttIntakeDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  /** The mapping (mqtt-mapping.ts), run behind a bulkhead: SupervisedMqttMapper. */
  map: MqttMap;
  known: KnownAlert;
}

/**
 * Where the MQTT clients hand their messages: each message is checked for size, mapped
 * (mqtt-mapping.ts) and taken by the DeviceIntake, which resolves once the outcome is committed.
 * Only then does the client acknowledge the message to the broker.
 */
export class MqttIntake {
  private readonly integrations: IntegrationsRepository;
  private readonly intake: DeviceIntake;
  /** Messages arrive without waiting for each other's commits: those about one alert still run in order. */
  private readonly serial = new SerialByKey();

  constructor(private readonly deps: MqttIntakeDeps) {
    this.integrations = deps.integrations;
    this.intake = deps.intake;
  }

  /** The mqtt integrations' connections, for the driver to run exactly these. */
  endpoints(): MqttEndpoint[] {
    return (this.integrations.all() as MqttIntegration[])
      .filter((integration) => integration.kind === "mqtt" && integration.broker_url && integration.topics?.length)
      .map((integration) => ({
        integrationId: integration.id,
        subscription: {
          brokerUrl: integration.broker_url as string,
          topics: integration.topics as string[],
          username: integration.username ?? null,
          password: integration.password ?? null,
          clientId: integration.client_id ?? defaultClientId(integration.id),
          caFile: integration.tls_ca_file ?? null
        }
      }));
  }

  /**
   * Takes one message for an integration. Resolves once its outcome (accepted, unmapped or
   * refused) is recorded; rejects when the journal cannot commit, so the message stays
   * unacknowledged. Called for each message as it arrives: messages whose actions name the same
   * alert or heartbeat run one after another, in order; the rest share the journal's commits.
   */
  async receive(integrationId: string, {topic, payload, retained}: MqttMessage): Promise<void> {
    const integration = this.integrations.get(integrationId);
    // Deleted while the message was on its way: its client is being stopped, and nobody is left to page.
    if (!integration || integration.kind !== "mqtt") return;
    const text = payload.toString("utf8");
    const message: DeviceMessage = {transport: "mqtt", origin: topic, summary: topic, body: text, size: payload.length};
    if (payload.length > MQTT_PAYLOAD_MAX_BYTES) {
      this.intake.refuse(
        integration,
        {...message, body: text.slice(0, 1024)},
        `payload of ${payload.length} bytes is over the limit of ${MQTT_PAYLOAD_MAX_BYTES}`
      );
      return;
    }
    const mapped = await this.deps.map(integration, topic, text);
    if ("refused" in mapped) {
      this.intake.refuse(integration, message, mapped.refused);
      return;
    }
    const {actions, note} = mapped.mapping;
    if (!actions.length) {
      // Kept or counted only: nothing to order. Paged (unmapped: page, the default), it is an alert
      // keyed by its topic, and one topic's messages then run in order like any alert's.
      if (integration.unmapped === "keep") await this.intake.take(integration, message, actions, note);
      else await this.serial.run(`topic:${topic}`, () => this.intake.take(integration, message, actions, note));
      return;
    }
    const keys = actions.map((action) => `${action.action === "heartbeat" ? "heartbeat" : "alert"}:${action.alert_id}`);
    await this.serial.runAll(keys, async () => {
      const restoring = retained ? this.restoring(integration, actions) : actions;
      // A retained copy of a state already acted on: counted, and nobody paged again.
      if (!restoring.length) return this.intake.noted(integration, message);
      await this.intake.take(integration, message, restoring, note);
    });
  }

  /**
   * A retained message restores state: its resolves apply as any resolve, but a fire for a key
   * that already has an alert (open, acknowledged, exhausted or resolved) is left out. A broker
   * hands the same retained message out at every subscribe (each start), and MQTT gives it no
   * time: taken as news it would page again for an alarm someone already dealt with.
   */
  private restoring(integration: IntegrationRecord, actions: InboundAction[]): InboundAction[] {
    return actions.filter((action) => action.action !== "fire" || !this.deps.known(integration, action.alert_id));
  }
}
