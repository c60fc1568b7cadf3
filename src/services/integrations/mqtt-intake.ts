import type {RegexMatcher} from "../../domain/integration-rules.js";
import type {MqttEndpoint, MqttIntegrationFields} from "../../domain/mqtt.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import {AppError} from "../shared/errors.js";
import type {DeviceIntake, DeviceMessage} from "./device-intake.js";
import {defaultClientId, mqttActions} from "./mqtt-mapping.js";

/** A payload larger than this is refused and counted; the broker itself drops packets over 1 MiB for us. */
export const MQTT_PAYLOAD_MAX_BYTES = 64 * 1024;

type MqttIntegration = IntegrationRecord & Partial<MqttIntegrationFields>;

/**
 * Where the MQTT clients hand their messages: each message is checked for size, mapped
 * (mqtt-mapping.ts) and taken by the DeviceIntake, which resolves once the outcome is committed.
 * Only then does the client acknowledge the message to the broker.
 */
export class MqttIntake {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly intake: DeviceIntake,
    private readonly matcher: RegexMatcher
  ) {}

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
   * refused) is recorded; rejects when the journal cannot commit, so the message stays unacknowledged.
   */
  async receive(integrationId: string, topic: string, payload: Buffer): Promise<void> {
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
    let mapping;
    try {
      mapping = mqttActions(integration, topic, text, this.matcher);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.intake.refuse(integration, message, error.message);
      return;
    }
    await this.intake.take(integration, message, mapping.actions, mapping.note);
  }
}
