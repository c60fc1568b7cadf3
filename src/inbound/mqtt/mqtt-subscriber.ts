import type {IClientOptions, IPublishPacket, MqttClient} from "mqtt";
import type {MqttConnectionState, MqttSubscription} from "../../domain/mqtt.js";
import {AckQueue} from "./ack-queue.js";
import {readSmallFile} from "../../lib/small-file.js";

/** One message as the broker delivered it. */
export interface ReceivedMqttMessage {
  topic: string;
  payload: Buffer;
  /**
   * A retained message the broker hands out because we subscribed: the topic's last known state,
   * perhaps one already acted on, not news.
   */
  retained: boolean;
}

/**
 * Handles one message; resolves once its outcome is committed, and only then is the message
 * acknowledged to the broker. Called for each message as it arrives, without waiting for the
 * earlier ones to settle, so that many share one journal commit; keeping the order where it
 * matters is the handler's. A rejection leaves the message unacknowledged: the client reconnects
 * and the broker delivers it again.
 */
export type MqttMessageHandler = (message: ReceivedMqttMessage) => Promise<void>;

/** The largest packet the broker may send us: it drops larger ones itself, so memory stays bounded. */
export const MAX_PACKET_BYTES = 1024 * 1024;
/** How long the broker keeps our session (and queues QoS 1 messages) while Klaxon is away. */
const SESSION_EXPIRY_SECONDS = 7 * 24 * 3600;
/**
 * How many unacknowledged QoS 1 messages the broker may send us at once (MQTT 5 Receive Maximum;
 * mosquitto's own default is 20). A wide window lets a flood share few commits; it bounds what is
 * held in memory to this many payloads.
 */
export const RECEIVE_MAXIMUM = 1000;
/** Pauses between reconnection attempts: quick at first, then once a minute. */
const RECONNECT_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/** The pause before reconnection attempt `attempt` (1-based), with ±20% jitter so many clients do not retry in step. */
export function reconnectDelayMs(attempt: number, random: () => number): number {
  const base = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length) - 1] ?? RECONNECT_DELAYS_MS[0];
  return Math.round(base * (1 + (random() * 2 - 1) * 0.2));
}

/** Passed to mqtt.js's message callback so it reads on without sending the PUBACK itself (lib/handlers/publish.js). */
const ACK_DEFERRED = new Error("acknowledged by the subscriber after the commit");

/** What mqtt.js offers for writing a packet; private in its typings, the only way to send a PUBACK of our own. */
interface PacketSender {
  _sendPacket(packet: {cmd: "puback"; messageId: number; reasonCode: number}): void;
}

/**
 * One integration's MQTT client: a persistent session (clean start off, so QoS 1 messages queued
 * while Klaxon was down arrive on reconnect), its filters at QoS 1, reconnection with backoff.
 * Messages are handed on as they arrive, up to RECEIVE_MAXIMUM unacknowledged, and each is
 * acknowledged, in order, once it and every earlier one have committed: a flood shares commits
 * instead of paying one per message.
 */
export class MqttSubscriber {
  private client: MqttClient | null = null;
  private readonly starting: Promise<void>;
  private acks = new AckQueue(() => {});
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: MqttConnectionState;

  constructor(
    private readonly subscription: MqttSubscription,
    private readonly handler: MqttMessageHandler,
    private readonly now: () => Date,
    private readonly onError: (message: string) => void = () => {}
  ) {
    this.current = {connected: false, since: now().toISOString(), last_error: null};
    this.acks.close();
    this.starting = this.start();
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
    await this.starting;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    // A client that never connected (its CA file refused) has no stream for end() to close.
    if (!client?.stream) return;
    const properties = dropSession ? {sessionExpiryInterval: 0} : {};
    await new Promise<void>((done) => {
      if (!client.connected) return client.end(true, {}, () => done());
      client.end(false, {reasonCode: 0, properties}, () => done());
    });
  }

  private async start(): Promise<void> {
    let ca: Buffer | null = null;
    if (this.subscription.caFile !== null) {
      try {
        ca = await readSmallFile(this.subscription.caFile);
      } catch (error) {
        // Without its CA file the client does not connect at all (an unverified TLS link is no
        // option): it stays down with the reason, and the other integrations' clients go on.
        return this.failed(`cannot read tls_ca_file ${this.subscription.caFile}: ${(error as Error).message}`);
      }
    }
    // mqtt.js (about 20 MB resident) is loaded by the first client, not by every gateway: most have no MQTT integration.
    const {connect} = await import("mqtt");
    if (this.stopped) return;
    const client = connect(this.subscription.brokerUrl, this.options(ca));
    this.client = client;
    client.handleMessage = (packet: IPublishPacket, callback: (error?: Error) => void) => {
      this.receive(client, packet);
      callback(ACK_DEFERRED);
    };
    client.on("connect", () => {
      this.attempts = 0;
      this.acks.close();
      this.acks = new AckQueue((messageId) => {
        if (client.connected)
          (client as unknown as PacketSender)._sendPacket({cmd: "puback", messageId, reasonCode: 0});
      });
      // A session the broker kept still holds the subscriptions; subscribing again is harmless and
      // covers a lost one. Connected counts from the SUBACK: only then do messages reach us.
      client.subscribe(this.subscription.topics, {qos: 1}, (error, granted) => {
        if (error) return this.failed(`subscribe failed: ${error.message}`);
        this.setState(true, this.current.last_error);
        const refused = (granted ?? []).filter((grant) => grant.qos > 2).map((grant) => grant.topic);
        if (refused.length) this.failed(`the broker refused the topic filters ${refused.join(", ")}`);
      });
    });
    client.on("error", (error) => this.failed(error.message));
    client.on("close", () => {
      // The broker sends again what this connection left unacknowledged.
      this.acks.close();
      if (this.current.connected) this.setState(false, this.current.last_error);
      this.scheduleReconnect();
    });
  }

  /** Hands a message on at once; its PUBACK (QoS 1) follows its commit. */
  private receive(client: MqttClient, packet: IPublishPacket): void {
    const acks = this.acks;
    const settle = packet.qos > 0 && packet.messageId !== undefined ? acks.add(packet.messageId) : () => {};
    const payload = typeof packet.payload === "string" ? Buffer.from(packet.payload) : packet.payload;
    this.handler({topic: packet.topic, payload, retained: packet.retain}).then(settle, (failure: Error) => {
      // No PUBACK for it nor for anything after it: the broker delivers them again on reconnect.
      acks.close();
      if (acks !== this.acks) return;
      this.failed(`message on ${packet.topic} not committed: ${failure.message}`);
      client.stream.destroy();
    });
  }

  private options(ca: Buffer | null): IClientOptions {
    const {username, password, clientId} = this.subscription;
    return {
      protocolVersion: 5,
      clientId,
      clean: false,
      properties: {
        sessionExpiryInterval: SESSION_EXPIRY_SECONDS,
        maximumPacketSize: MAX_PACKET_BYTES,
        receiveMaximum: RECEIVE_MAXIMUM
      },
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
        if (!this.stopped) this.client?.reconnect();
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
