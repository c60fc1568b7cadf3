import {randomBytes} from "node:crypto";
import dgram, {type Socket} from "node:dgram";
import {once} from "node:events";
import {systemClock, type Clock} from "../../lib/clock.js";
import {createLogger, type Logger} from "../../lib/logger.js";
import {
  SupervisedWorker,
  workerModule,
  type SupervisedWorkerOptions,
  type SupervisedWorkerStats
} from "../../lib/supervised-worker.js";
import {validParserEvent} from "./parser-event.js";
import type {ParserData, ParserEvent, ParserWork, ReceivedTrap, TrapCredentials, TrapRefusal} from "./trap-types.js";
import {UsmReplayGuard} from "./usm-replay-guard.js";

export type {ReceivedTrap, TrapCredentials, TrapRefusal, TrapUser, TrapVarbind} from "./trap-types.js";

export interface TrapListenerOptions {
  port: number;
  /** The address to bind: 0.0.0.0 (every IPv4 address), or one address, e.g. 127.0.0.1. */
  address: string;
  /** Handed each trap; what it returns is not awaited (UDP has no back-pressure), a rejection is its own to log. */
  onTrap: (trap: ReceivedTrap) => unknown;
  onRefused: (refusal: TrapRefusal) => void;
  /**
   * The communities and users to let in, asked before each datagram is read: a change to the
   * integrations applies to the next packet, with no event to wire.
   */
  credentials: () => TrapCredentials;
  /** The replay guard's time (RFC 3414 engine time); the system clock unless a test gives another. */
  clock?: Clock;
  /** Where the parser worker's crashes are logged. */
  logger?: Logger;
  /** Tuning of the parser worker's supervisor (tests shorten the hang limit). */
  worker?: Pick<SupervisedWorkerOptions<ParserEvent>, "hangAfterMs" | "heartbeatMs" | "backoff" | "resourceLimits">;
}

/** What the listener has counted since it started, for metrics and /readyz. */
export interface TrapListenerStats {
  /** Datagrams received on the port. */
  datagrams: number;
  /** Traps and informs handed on (to the intake): each must end as a counted outcome of its integration. */
  traps: number;
  /** Authentic SNMPv3 messages refused as replayed or outside the time window (RFC 3414 §3.2 step 7). */
  replaysRefused: number;
  /** Events from the parser that did not have the shape of one (a parser bug; never trusted). */
  invalidEvents: number;
  parser: SupervisedWorkerStats;
}

// snmpEngineBoots of our engine must grow across restarts (RFC 3414 §2.2.2) and nothing on disk
// counts them: the seconds since 2020 at the listener's start grow, and stay below 2^31-1 until 2088.
const BOOTS_EPOCH_MS = Date.UTC(2020, 0, 1);

/**
 * The box's one SNMP notification receiver: v1 and v2c traps, informs, and v3 traps and informs
 * under USM (authPriv only). The UDP socket lives here; every datagram is read in a supervised
 * worker (`trap-parser.worker.ts`): a packet that crashes or hangs the parser costs that worker,
 * which restarts, never the gateway. Only validated events come back: a trap, a reply (an engine
 * discovery's report, an inform's answer) or a refusal. An authentic v3 message then passes the
 * replay guard before its inform is answered or its trap handed on; everything turned away reaches
 * `onRefused` with the sender's address, never an exception.
 */
export class TrapListener {
  private socket: Socket | null = null;
  private parser: SupervisedWorker<ParserWork, ParserEvent> | null = null;
  private guard: UsmReplayGuard | null = null;
  private engineStartMs = 0;
  /** The credentials the parser holds, as JSON: compared, never logged. */
  private applied = "";
  private readonly counts = {datagrams: 0, traps: 0, replaysRefused: 0, invalidEvents: 0};
  private readonly clock: Clock;

  constructor(private readonly options: TrapListenerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Binds the port, then starts the parser; rejects when it cannot (in use, or below 1024 without CAP_NET_BIND_SERVICE). */
  async start(): Promise<void> {
    this.engineStartMs = this.clock.now();
    const engine: ParserData = {
      // RFC 3411 §5 format 5 (octets) under net-snmp's enterprise, as net-snmp makes its own.
      engineId: `8000b98305${randomBytes(12).toString("hex")}`,
      engineBoots: Math.max(1, Math.floor((this.engineStartMs - BOOTS_EPOCH_MS) / 1000))
    };
    this.guard = new UsmReplayGuard({
      engineId: engine.engineId,
      boots: engine.engineBoots,
      startedAtMs: this.engineStartMs
    });
    this.parser = new SupervisedWorker<ParserWork, ParserEvent>({
      name: "snmp-parser",
      module: workerModule(import.meta.url, "./trap-parser.worker"),
      data: engine,
      logger: this.options.logger ?? createLogger("error"),
      onEvent: (event) => this.onEvent(event),
      // A fresh worker knows no credentials: the next datagram sends them again.
      onReady: () => (this.applied = ""),
      ...this.options.worker
    });
    const socket = dgram.createSocket("udp4");
    this.socket = socket;
    socket.on("message", (bytes, rinfo) => this.onDatagram(bytes, rinfo));
    // The port first: a port in use refuses the start at once, not after the worker loaded. A
    // datagram that arrives before the worker is ready is dropped and counted.
    try {
      socket.bind(this.options.port, this.options.address);
      await once(socket, "listening");
      await this.parser.start();
    } catch (error) {
      await this.stop();
      throw error;
    }
    // A send or receive error after the bind (ICMP unreachable on an answer, say) is the packet's, not the listener's.
    socket.on("error", () => undefined);
  }

  async stop(): Promise<void> {
    const {socket, parser} = this;
    this.socket = null;
    this.parser = null;
    this.applied = "";
    if (socket) await new Promise<void>((done) => socket.close(() => done()));
    await parser?.stop();
  }

  stats(): TrapListenerStats | null {
    const parser = this.parser?.stats();
    return parser ? {...this.counts, parser} : null;
  }

  private onDatagram(bytes: Buffer, rinfo: dgram.RemoteInfo): void {
    this.counts.datagrams++;
    const parser = this.parser;
    if (!parser) return;
    const credentials = this.options.credentials();
    const fingerprint = JSON.stringify(credentials);
    if (fingerprint !== this.applied && parser.post({kind: "credentials", credentials})) this.applied = fingerprint;
    const copy = new Uint8Array(bytes);
    parser.post(
      {
        kind: "datagram",
        bytes: copy,
        from: {address: rinfo.address, port: rinfo.port},
        size: rinfo.size,
        engineTime: Math.floor((this.clock.now() - this.engineStartMs) / 1000)
      },
      [copy.buffer]
    );
  }

  private onEvent(raw: unknown): void {
    const event = validParserEvent(raw);
    if (!event) {
      this.counts.invalidEvents++;
      return;
    }
    if (event.kind === "refused") return this.options.onRefused(event.refusal);
    if (event.kind === "reply") return this.send(event.bytes, event.to);
    const refusal = event.usm ? this.guard?.admit(event.usm, this.clock.now()) : null;
    if (refusal) {
      this.counts.replaysRefused++;
      return this.options.onRefused({agent: event.trap.agent, reason: refusal, size: event.trap.size});
    }
    if (event.reply) this.send(event.reply, event.from);
    this.counts.traps++;
    this.options.onTrap(event.trap);
  }

  private send(bytes: Uint8Array, to: {address: string; port: number}): void {
    // A failed send (the sender gone) is no concern of ours: UDP, and the sender retries an inform.
    this.socket?.send(bytes, to.port, to.address, () => undefined);
  }
}
