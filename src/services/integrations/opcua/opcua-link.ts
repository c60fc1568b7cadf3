import {format} from "node:util";
import {
  AttributeIds,
  callConditionRefresh,
  type ClientSession,
  type ClientSubscription,
  type DataValue,
  type NodeId,
  OPCUAClient,
  setErrorLogger,
  setWarningLogger,
  TimestampsToReturn,
  type UserIdentityInfo,
  UserTokenType
} from "node-opcua-client";
import type {Clock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import {ReconnectBackoff, type ReconnectSchedule} from "../../../lib/reconnect-backoff.js";
import type {LinkStatus, PlcLink, PlcLinkListener, PointReading} from "../plc/plc-link.js";
import {acknowledgeOnServer, ConditionTracker, monitorConditions} from "./opcua-alarms.js";
import {certificateManager, ownCertificate} from "./opcua-certificate.js";
import {nodeIdOf, pointReading, securityModeOf, securityPolicyOf} from "./opcua-values.js";
import {opcUaErrorInWords, statusInWords} from "./opcua-words.js";

/** One OPC UA integration's connection, as the plc wiring maps it from the API's "opcua" block. */
export interface OpcUaLinkConfig {
  readonly endpointUrl: string;
  readonly securityMode: "None" | "Sign" | "SignAndEncrypt";
  /** node-opcua's short name: "None", "Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss". */
  readonly securityPolicy: string;
  /** null for an anonymous session. */
  readonly user: string | null;
  readonly password: string | null;
  /** Subscribe to the server's Alarms & Conditions events. */
  readonly alarms: boolean;
  readonly points: readonly {readonly name: string; readonly nodeId: string}[];
}

/** What an OPC UA link is given. */
export interface OpcUaLinkDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** The box's data dir: the OPC UA certificate and trust lists live in its opcua-pki/. */
  readonly dataDir: string;
  /** The pauses before reconnecting after failures in a row (default: 1 s doubling up to 30 s). */
  readonly reconnect?: ReconnectSchedule;
}

const RECONNECT: ReconnectSchedule = {firstMs: 1_000, maxMs: 30_000};
// A connection (TCP, secure channel, session, subscription) that takes longer is given up and retried.
const CONNECT_TIMEOUT_MS = 20_000;
const CLOSE_TIMEOUT_MS = 3_000;
const PUBLISHING_INTERVAL_MS = 500;
const SAMPLING_INTERVAL_MS = 250;
// The server sends a keep-alive at least every publishing interval x keep-alive count when nothing
// changes; silence for three of those (and at least this long) means the server is gone.
const KEEPALIVE_COUNT = 10;
const MIN_SILENCE_MS = 15_000;

interface Connection {
  readonly client: OPCUAClient;
  session: ClientSession | null;
  subscription: ClientSubscription | null;
  lastHeardMs: number;
}

/** The OPC UA link of one integration (PLC-INTERFACE.md): subscriptions, not polling. */
export function createOpcUaLink(config: OpcUaLinkConfig, deps: OpcUaLinkDeps): PlcLink {
  routeLibraryLog(deps.log);
  return new OpcUaLink(config, deps);
}

let libraryLogRouted = false;

/**
 * node-opcua prints its own warnings and errors to the console; the box's log is JSON lines
 * (journald), so they go through our logger instead: its warnings (one per certificate made, per
 * endpoint it finds unsuited) as debug, its errors as warnings. Once per process: the hooks are global.
 */
function routeLibraryLog(log: Logger): void {
  if (libraryLogRouted) return;
  libraryLogRouted = true;
  const library = log.child({component: "node-opcua"});
  setWarningLogger((...args: unknown[]) => library.debug(format(...args).trim()));
  setErrorLogger((...args: unknown[]) => library.warn(format(...args).trim()));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: the server did not answer in time (timeout)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class OpcUaLink implements PlcLink {
  private listener: PlcLinkListener | null = null;
  private connection: Connection | null = null;
  // Each connection attempt has its own generation: handlers of an older one do nothing.
  private generation = 0;
  private readonly backoff: ReconnectBackoff;
  private retryTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private lastStatus: LinkStatus | null = null;
  private stopped = false;
  private readonly tracker: ConditionTracker;
  private readonly log: Logger;

  constructor(
    private readonly config: OpcUaLinkConfig,
    private readonly deps: OpcUaLinkDeps
  ) {
    this.log = deps.log.child({opcua: config.endpointUrl});
    this.backoff = new ReconnectBackoff(deps.reconnect ?? RECONNECT);
    this.tracker = new ConditionTracker(
      (alarm) => this.tell((listener) => listener.alarm?.(alarm)),
      () => void this.refreshConditions()
    );
  }

  start(listener: PlcLinkListener): void {
    if (this.listener || this.stopped) return;
    this.listener = listener;
    this.watchdog = setInterval(() => this.checkSilence(), 5_000);
    this.watchdog.unref();
    void this.connect();
  }

  async readNow(): Promise<readonly PointReading[]> {
    const session = this.connection?.session;
    if (!session) throw new Error(this.lastStatus?.error ?? "not connected to the OPC UA server yet");
    const nodes = this.config.points.map((point) => nodeIdOf(point.nodeId));
    const readable = nodes.filter((node): node is NodeId => node !== null);
    const values = await withTimeout(
      session.read(readable.map((nodeId) => ({nodeId, attributeId: AttributeIds.Value}))),
      CONNECT_TIMEOUT_MS,
      "read"
    );
    return this.config.points.map((point, index) => {
      const node = nodes[index];
      return this.readingOf(point.name, node ? values[readable.indexOf(node)] : undefined);
    });
  }

  async acknowledgeAlarm(conditionId: string, by: string, comment: string): Promise<void> {
    const session = this.connection?.session;
    if (!session) throw new Error(`cannot acknowledge on the server: ${this.lastStatus?.error ?? "not connected"}`);
    const eventId = this.tracker.eventIdOf(conditionId);
    if (!eventId) throw new Error(`the server has not reported an alarm ${conditionId}`);
    const text = comment.trim() ? `by ${by}: ${comment.trim()}` : `by ${by}`;
    await withTimeout(acknowledgeOnServer(session, {conditionId, eventId}, text), CONNECT_TIMEOUT_MS, "acknowledge");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    this.retryTimer = this.watchdog = null;
    const connection = this.connection;
    this.connection = null;
    this.listener = null;
    if (connection) await this.close(connection);
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    try {
      await withTimeout(this.open(generation), CONNECT_TIMEOUT_MS, "connecting");
      if (generation !== this.generation) return;
      this.backoff.succeeded();
      this.report({state: "connected"});
      if (this.config.alarms) await this.refreshConditions();
    } catch (error) {
      this.lost(generation, error);
    }
  }

  /** Client, secure channel, session, one subscription with the points and the alarm events. */
  private async open(generation: number): Promise<void> {
    const {securityMode, securityPolicy} = this.config;
    if ((securityMode === "None") !== (securityPolicy === "None")) {
      throw new Error(
        `security mode ${securityMode} with policy ${securityPolicy} cannot work: None goes with None, Sign and SignAndEncrypt with a policy such as Basic256Sha256`
      );
    }
    const client = OPCUAClient.create({
      applicationName: "Klaxon",
      endpointMustExist: false,
      securityMode: securityModeOf(this.config.securityMode),
      securityPolicy: securityPolicyOf(this.config.securityPolicy),
      clientCertificateManager: await certificateManager(this.deps.dataDir),
      // Klaxon does its own reconnecting (a fresh session and subscription, with back-off).
      connectionStrategy: {maxRetry: 0, initialDelay: 1_000, maxDelay: 2_000},
      requestedSessionTimeout: 60_000,
      keepSessionAlive: false
    });
    const connection: Connection = {client, session: null, subscription: null, lastHeardMs: this.deps.clock.now()};
    if (generation !== this.generation) return;
    this.connection = connection;
    const lost = (why: string) => () => this.lost(generation, new Error(why));
    client.on("connection_lost", lost("the connection to the server was lost (BadConnectionClosed)"));
    client.on("backoff", lost("the connection to the server was lost (BadConnectionClosed)"));
    client.on("close", lost("the server closed the connection (BadConnectionClosed)"));
    await client.connect(this.config.endpointUrl);
    const session = await client.createSession(this.identity());
    connection.session = session;
    session.on("session_closed", lost("the session was closed by the server (BadSessionClosed)"));
    const subscription = await session.createSubscription2({
      requestedPublishingInterval: PUBLISHING_INTERVAL_MS,
      requestedMaxKeepAliveCount: KEEPALIVE_COUNT,
      requestedLifetimeCount: KEEPALIVE_COUNT * 6,
      maxNotificationsPerPublish: 1000,
      publishingEnabled: true,
      priority: 10
    });
    connection.subscription = subscription;
    const heard = () => (connection.lastHeardMs = this.deps.clock.now());
    subscription.on("keepalive", heard);
    subscription.on("received_notifications", heard);
    subscription.on("terminated", lost("the server ended the subscription (BadSubscriptionIdInvalid)"));
    await Promise.all(this.config.points.map((point) => this.monitorPoint(subscription, point)));
    if (this.config.alarms) {
      await monitorConditions(subscription, this.tracker).catch((error: unknown) =>
        this.log.warn("opcua alarms unavailable", {error: error instanceof Error ? error.message : String(error)})
      );
    }
  }

  private identity(): UserIdentityInfo {
    if (this.config.user === null) return {type: UserTokenType.Anonymous};
    return {type: UserTokenType.UserName, userName: this.config.user, password: this.config.password ?? ""};
  }

  /** A point whose node the server refuses reads bad, in words, without failing the link's other points. */
  private async monitorPoint(subscription: ClientSubscription, point: {name: string; nodeId: string}): Promise<void> {
    const nodeId = nodeIdOf(point.nodeId);
    if (!nodeId)
      return this.badPoint(point, `"${point.nodeId}" is not an OPC UA node id (such as ns=3;s="DB1"."Temp")`);
    try {
      const item = await subscription.monitor(
        {nodeId, attributeId: AttributeIds.Value},
        {samplingInterval: SAMPLING_INTERVAL_MS, discardOldest: true, queueSize: 1},
        TimestampsToReturn.Both
      );
      // The server refused this item (an unknown node id): the promise still resolves, with the status.
      if (!item.statusCode.isGood()) return this.badPoint(point, statusInWords(item.statusCode.name));
      item.on("changed", (value: DataValue) =>
        this.tell((listener) => listener.reading(this.readingOf(point.name, value)))
      );
    } catch (error) {
      this.badPoint(point, error instanceof Error ? error.message : String(error));
    }
  }

  private badPoint(point: {name: string; nodeId: string}, error: string): void {
    this.log.warn("opcua point cannot be read", {point: point.name, node_id: point.nodeId, error});
    this.tell((listener) =>
      listener.reading({point: point.name, value: null, quality: "bad", readAt: new Date(this.deps.clock.now())})
    );
  }

  private readingOf(point: string, dataValue: DataValue | undefined): PointReading {
    return pointReading(point, dataValue, new Date(this.deps.clock.now()));
  }

  /** Asks the server to re-send every retained condition (after each connection, and when it asks). */
  private async refreshConditions(): Promise<void> {
    const subscription = this.connection?.subscription;
    const session = this.connection?.session;
    if (!subscription || !session) return;
    try {
      const status = await callConditionRefresh(session, subscription.subscriptionId);
      if (!status.isGood()) this.log.warn("opcua condition refresh refused", {status: statusInWords(status.name)});
    } catch (error) {
      this.log.warn("opcua condition refresh failed", {error: error instanceof Error ? error.message : String(error)});
    }
  }

  private checkSilence(): void {
    const connection = this.connection;
    const subscription = connection?.subscription;
    if (!connection || !subscription || this.lastStatus?.state !== "connected") return;
    const limitMs = Math.max(MIN_SILENCE_MS, 3 * subscription.publishingInterval * subscription.maxKeepAliveCount);
    if (this.deps.clock.now() - connection.lastHeardMs > limitMs) {
      this.lost(this.generation, new Error("the server stopped answering: no keep-alive (BadTimeout)"));
    }
  }

  /** Any failure: say it in words, drop the connection, and try again after a back-off. */
  private lost(generation: number, error: unknown): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation++;
    const connection = this.connection;
    this.connection = null;
    if (connection) void this.close(connection);
    const delayMs = this.backoff.failed();
    // The words need the certificate's facts (a file read); a connection made meanwhile is newer news.
    const failures = this.backoff.failures;
    void ownCertificate(this.deps.dataDir).then((certificate) => {
      if (!this.stopped && this.backoff.failures === failures) {
        this.report({state: "unreachable", error: opcUaErrorInWords(error, certificate)});
      }
    });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, delayMs);
  }

  /** Closes the session (a PLC has few) and the connection, never waiting long on a dead server. */
  private async close(connection: Connection): Promise<void> {
    connection.client.removeAllListeners();
    const closing = async () => {
      await connection.session?.close(true).catch(() => undefined);
      await connection.client.disconnect();
    };
    await withTimeout(closing(), CLOSE_TIMEOUT_MS, "closing").catch(() => undefined);
  }

  private report(status: LinkStatus): void {
    if (this.lastStatus?.state === status.state && this.lastStatus.error === status.error) return;
    this.lastStatus = status;
    if (status.state === "connected") {
      void ownCertificate(this.deps.dataDir).then((certificate) =>
        this.log.info("opcua link connected", {certificate: certificate.path, thumbprint: certificate.thumbprint})
      );
    } else this.log.warn("opcua link unreachable", {error: status.error});
    this.tell((listener) => listener.link(status));
  }

  /** A listener that throws must not break the link (nor reach node-opcua's event loop). */
  private tell(call: (listener: PlcLinkListener) => void): void {
    const listener = this.listener;
    if (!listener) return;
    try {
      call(listener);
    } catch (error) {
      this.log.error("opcua link listener failed", {error: error instanceof Error ? error.message : String(error)});
    }
  }
}
