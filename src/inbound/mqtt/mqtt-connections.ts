import type {Logger} from "../../lib/logger.js";
import type {MqttBrokerState, MqttConnectionState, MqttEndpoint} from "../../domain/mqtt.js";
import {MqttSubscriber, type ReceivedMqttMessage} from "./mqtt-subscriber.js";

/** Handles a message for an integration; resolves once committed (the client then acknowledges it). */
export type MqttIntegrationHandler = (integrationId: string, message: ReceivedMqttMessage) => Promise<void>;

interface Running {
  subscriber: MqttSubscriber;
  /** The settings it was started with: a change restarts it. */
  settings: string;
  brokerUrl: string;
}

/**
 * The MQTT clients, one per mqtt integration. `sync` is called with every integration's settings
 * at start and after each change: clients start, restart (settings changed) or stop (deleted) so
 * that exactly those run.
 */
export class MqttConnections {
  private readonly running = new Map<string, Running>();
  /** One sync at a time: two quick edits must not start two clients with one client id. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly handler: MqttIntegrationHandler,
    private readonly now: () => Date,
    private readonly logger: Logger
  ) {}

  sync(endpoints: MqttEndpoint[]): Promise<void> {
    const next = this.queue.then(() => this.apply(endpoints));
    this.queue = next.catch(() => {});
    return next;
  }

  /** The state of each integration's broker connection. */
  states(): MqttBrokerState[] {
    return [...this.running].map(([id, {subscriber, brokerUrl}]) => ({
      integration_id: id,
      broker_url: brokerUrl,
      ...subscriber.state
    }));
  }

  state(integrationId: string): MqttConnectionState | null {
    return this.running.get(integrationId)?.subscriber.state ?? null;
  }

  /** Disconnects every client, keeping their sessions: the broker queues for them until the next start. */
  async stop(): Promise<void> {
    await this.queue;
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map(({subscriber}) => subscriber.stop(false)));
  }

  private async apply(endpoints: MqttEndpoint[]): Promise<void> {
    const wanted = new Map(endpoints.map((endpoint) => [endpoint.integrationId, endpoint]));
    for (const [id, running] of [...this.running]) {
      const endpoint = wanted.get(id);
      if (endpoint && JSON.stringify(endpoint.subscription) === running.settings) continue;
      this.running.delete(id);
      // Deleted or moved: the old session is of no more use, and its queued messages would page twice.
      await running.subscriber.stop(true);
    }
    for (const [id, {subscription}] of wanted) {
      if (this.running.has(id)) continue;
      const log = this.logger.child({component: "mqtt", integration_id: id});
      const subscriber = new MqttSubscriber(
        subscription,
        (message) => this.handler(id, message),
        this.now,
        (error) => log.warn("mqtt broker connection", {broker_url: subscription.brokerUrl, error})
      );
      this.running.set(id, {subscriber, settings: JSON.stringify(subscription), brokerUrl: subscription.brokerUrl});
    }
  }
}
