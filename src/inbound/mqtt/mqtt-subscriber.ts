import {readFileSync} from "node:fs";
import mqtt, {type IClientOptions, type IPublishPacket, type MqttClient} from "mqtt";
import type {MqttConnectionState, MqttSubscription} from "../../domain/mqtt.js";

/** One message as the broker delivered it. */
export interface ReceivedMqttMessage {
  topic: string;
  payload: Buffer;
}

/**
 * Handles one message; resolves once its outcome is committed, and only then is the message
 * acknowledged to the broker. A rejection leaves it unacknowledged: the client reconnects and the
 * broker delivers it again.
 */
export type MqttMessageHandler = (message: ReceivedMqttMessage) => Promise<void>;

/** The largest packet the broker may send us: it drops larger ones itself, so memory stays bounded. */
export const MAX_PACKET_BYTES = 1024 * 1024;
/** How long the broker keeps our session (and queues QoS 1 messages) while Klaxon is away. */
const SESSION_EXPIRY_SECONDS = 7 * 24 * 3600;
/** Pauses between reconnection attempts: quick at first, then once a minute. */
const RECONNECT_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/** The pause before reconnection attempt `attempt` (1-based), with ±20% jitter so many clients do not retry in step. */
export function reconnectDelayMs(attempt: number, random: () => number): number {
  const base = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length) - 1] ?? RECONNECT_DELAYS_MS[0];
  return Math.round(base * (1 + (random() * 2 - 1) * 0.2));
}

/**
 * One integration's MQTT client: a persistent session (clean start off, so QoS 1 messages queued
 * while Klaxon was down arrive on reconnect), its filters at QoS 1, reconnection with backoff, and
 * each message acknowledged only after the handler has committed it.
 */
export class MqttSubscriber {
  private readonly client: MqttClient;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: MqttConnectionState;

  constructor(
    private readonly subscription: MqttSubscription,
    handler: MqttMessageHandler,
    private readonly now: () => Date,
    private readonly onError: (message: string) => void = () => {}
  ) {
    this.current = {connected: false, since: now().toISOString(), last_error: null};
    let ca: Buffer | null = null;
    let unreadable: string | null = null;
    try {
      ca = subscription.caFile === null ? null : readFileSync(subscription.caFile);
    } catch (error) {
      unreadable = `cannot read tls_ca_file: ${(error as Error).message}`;
    }
    // Without its CA file the client does not connect at all (an unverified TLS link is no option):
    // it stays down with the reason, and the other integrations' clients are not held up.
    this.client = mqtt.connect(subscription.brokerUrl, {...this.options(ca), manualConnect: unreadable !== null});
    // mqtt.js sends a QoS 1 message's PUBACK when this callback is called (lib/handlers/publish.js),
    // and reads the next packet only after it: the acknowledgement waits for the commit.
    this.client.handleMessage = (packet: IPublishPacket, callback: (error?: Error) => void) => {
      const payload = typeof packet.payload === "string" ? Buffer.from(packet.payload) : packet.payload;
      handler({topic: packet.topic, payload}).then(
        () => callback(),
        (failure: Error) => {
          // No PUBACK: the broker keeps the message in flight and delivers it again on reconnect.
          callback(failure);
          this.failed(`message on ${packet.topic} not committed: ${failure.message}`);
          this.client.stream.destroy();
        }
      );
    };
    this.client.on("connect", () => {
      this.attempts = 0;
      // A session the broker kept still holds the subscriptions; subscribing again is harmless and
      // covers a lost one. Connected counts from the SUBACK: only then do messages reach us.
      this.client.subscribe(this.subscription.topics, {qos: 1}, (error, granted) => {
        if (error) return this.failed(`subscribe failed: ${error.message}`);
        this.setState(true, this.current.last_error);
        const refused = (granted ?? []).filter((grant) => grant.qos > 2).map((grant) => grant.topic);
        if (refused.length) this.failed(`the broker refused the topic filters ${refused.join(", ")}`);
      });
    });
    this.client.on("error", (error) => this.failed(error.message));
    this.client.on("close", () => {
      if (this.current.connected) this.setState(false, this.current.last_error);
      this.scheduleReconnect();
    });
    if (unreadable !== null) this.failed(unreadable);
  }

  get state(): MqttConnectionState {
    return {...this.current};
  }

  /**
   * Disconnects. `dropSession` asks the broker to forget the session (the integration was deleted
   * or moved); otherwise the broker keeps queuing for us until the next start.
   */
  async stop(dropSession: boolean): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const properties = dropSession ? {sessionExpiryInterval: 0} : {};
    // A client that never connected (its CA file unreadable) has no stream for end() to close.
    if (!this.client.stream) return;
    await new Promise<void>((done) => {
      if (!this.client.connected) return this.client.end(true, {}, () => done());
      this.client.end(false, {reasonCode: 0, properties}, () => done());
    });
  }

  private options(ca: Buffer | null): IClientOptions {
    const {username, password, clientId} = this.subscription;
    return {
      protocolVersion: 5,
      clientId,
      clean: false,
      properties: {sessionExpiryInterval: SESSION_EXPIRY_SECONDS, maximumPacketSize: MAX_PACKET_BYTES},
      ...(username !== null ? {username} : {}),
      ...(password !== null ? {password} : {}),
      ...(ca !== null ? {ca} : {}),
      rejectUnauthorized: true,
      // Reconnection is ours, with backoff; mqtt.js would retry at one fixed period.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      keepalive: 30
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    this.attempts += 1;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null;
        if (!this.stopped) this.client.reconnect();
      },
      reconnectDelayMs(this.attempts, Math.random)
    );
  }

  private failed(message: string): void {
    this.setState(this.current.connected, message);
    this.onError(message);
  }

  private setState(connected: boolean, lastError: string | null): void {
    const since = connected === this.current.connected ? this.current.since : this.now().toISOString();
    this.current = {connected, since, last_error: lastError};
  }
}
