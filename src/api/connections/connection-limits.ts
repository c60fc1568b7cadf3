import {readFileSync} from "node:fs";
import {Server, type RequestListener} from "node:http";
import type {Server as NetServer, Socket} from "node:net";
import type {Settings} from "../../settings/defaults.js";
import type {Logger} from "../../lib/logger.js";
import {AddressCounts, SocketRefusals} from "../../lib/connection-gate.js";
import {toProblem} from "../errors/problem.js";
import {AppError} from "../../services/shared/errors.js";

type HttpSettings = Settings["http"];

/**
 * Descriptors kept back from API connections for everything else the gateway opens: its listening
 * sockets (listen-backlog.ts), the journal (database, WAL, shared memory), the config store, the
 * serial port, SMTP, Telegram and webhook connections, backups, and Node's own (event loop, pipes,
 * worker threads).
 */
export const DESCRIPTORS_KEPT_BACK = 256;
/** What a refused client is told to wait; a connection slot frees as soon as another client's request ends. */
export const REFUSAL_RETRY_AFTER_SECONDS = 5;
// A refused socket is kept this long so its 503 is read before the close; beyond this many at
// once they are closed unanswered (SocketRefusals says why).
const REFUSAL_LINGER_MS = 1000;
const REFUSALS_LINGERING_MAX = 64;
// Node's default is 2,000 headers; no client of this API sends more than a few dozen.
const MAX_HEADERS = 100;
// How often Node looks for requests past their header or request timeout (its default, 30 s, would
// let a timed-out request live up to 30 s longer).
const TIMEOUT_CHECK_MS = 1000;

/** The soft limit on open files of this process (RLIMIT_NOFILE), or null where it cannot be read (not Linux) or is unlimited. */
export function openFilesLimit(limitsFile = "/proc/self/limits"): number | null {
  try {
    const line = readFileSync(limitsFile, "utf8")
      .split("\n")
      .find((row) => row.startsWith("Max open files"));
    const soft = Number(line?.slice("Max open files".length).trim().split(/\s+/)[0]);
    return Number.isInteger(soft) && soft > 0 ? soft : null;
  } catch {
    return null;
  }
}

/** The total connection cap: the setting, lowered to what the open-files limit leaves after the descriptors kept back. */
export function connectionCap(configured: number, openFiles: number | null): number {
  if (openFiles === null) return configured;
  return Math.max(1, Math.min(configured, openFiles - DESCRIPTORS_KEPT_BACK));
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
export function isLoopback(address: string): boolean {
  const plain = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return plain === "::1" || plain.startsWith("127.");
}

/** The whole answer to a refused connection, bytes ready to write: a problem document, Retry-After, and the close. */
function refusal(detail: string): Buffer {
  const error = new AppError("too_many_connections", detail, {retryAfterSeconds: REFUSAL_RETRY_AFTER_SECONDS});
  const {problem, headers} = toProblem(error, "/");
  const body = JSON.stringify(problem);
  const head = [
    `HTTP/1.1 ${problem.status} Service Unavailable`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "Content-Type: application/problem+json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close"
  ];
  return Buffer.from(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/**
 * The gateway's HTTP server: node:http's own, except that a connection reaches node:http (its
 * parser, its timeouts) only once `admit` lets it in. The server still listens itself, so Node's
 * header and request timeouts stay armed; injecting sockets from a separate net.Server would lose
 * them. Refused connections are simply never announced as "connection" events.
 */
export class AdmittingServer extends Server {
  private admit: (socket: Socket) => boolean = () => true;
  private readonly acceptors: NetServer[] = [];

  constructor(listener: RequestListener) {
    super(listener);
  }

  /** Who may in, given before the server listens. */
  admitWith(admit: (socket: Socket) => boolean): void {
    this.admit = admit;
  }

  override emit(event: string, ...args: unknown[]): boolean {
    if (event === "connection" && !this.admit(args[0] as Socket)) return false;
    return super.emit(event, ...args);
  }

  /**
   * A listening socket beside the server's own on its port (listen-backlog.ts): what it accepts
   * enters this server as a connection of its own, through the same admission, parser and timeouts.
   */
  addAcceptor(acceptor: NetServer): void {
    acceptor.on("connection", (socket: Socket) => this.emit("connection", socket));
    this.acceptors.push(acceptor);
  }

  /**
   * Stops listening on every socket of the server; the callback comes once the connections of all
   * of them have ended (net.Server's own waits for those its own socket accepted).
   */
  override close(callback?: (error?: Error) => void): this {
    const acceptorsClosed = this.acceptors
      .splice(0)
      .map((acceptor) => new Promise<void>((done) => acceptor.close(() => done())));
    return super.close((error) => void Promise.all(acceptorsClosed).then(() => callback?.(error)));
  }
}

/** What `limitConnections` settled on, for the start log and tests. */
export interface ConnectionLimits {
  maxConnections: number;
  maxPerAddress: number;
  /** Connections open now, refused ones excluded. */
  open(): number;
}

/**
 * Gives the server limits of its own: header, request and keep-alive timeouts, and caps on
 * connections per client address and in all. A connection over a cap gets a minimal 503 with
 * Retry-After on the raw socket and is closed, before node:http sees it: an idle client sends no
 * request to answer, so refusing at the first request would leave its descriptor held until the
 * header timeout; refused here, it costs no parser and frees its descriptor within a second.
 * Call it before the server listens.
 */
export function limitConnections(server: AdmittingServer, settings: HttpSettings, logger: Logger): ConnectionLimits {
  server.headersTimeout = settings.headers_timeout_seconds * 1000;
  server.requestTimeout = settings.request_timeout_seconds * 1000;
  server.keepAliveTimeout = settings.keep_alive_timeout_seconds * 1000;
  server.maxHeadersCount = MAX_HEADERS;
  (server as {connectionsCheckingInterval?: number}).connectionsCheckingInterval = TIMEOUT_CHECK_MS;

  const openFiles = openFilesLimit();
  const maxConnections = connectionCap(settings.max_connections, openFiles);
  if (maxConnections < settings.max_connections)
    logger.warn("the open-files limit lowers http.max_connections; raise it (LimitNOFILE in the unit, ulimit -n)", {
      open_files_limit: openFiles,
      configured: settings.max_connections,
      max_connections: maxConnections
    });
  const maxPerAddress = settings.max_connections_per_address;
  const perAddressRefusal = refusal(
    `this address holds ${maxPerAddress} connections, the most one address may; close idle ones or retry after ${REFUSAL_RETRY_AFTER_SECONDS} s`
  );
  const totalRefusal = refusal(
    `the gateway holds ${maxConnections} connections, the most it serves at once; retry after ${REFUSAL_RETRY_AFTER_SECONDS} s`
  );

  const perAddress = new AddressCounts();
  const refusals = new SocketRefusals(REFUSAL_LINGER_MS, REFUSALS_LINGERING_MAX);
  let open = 0;

  const refuse = (socket: Socket, answer: Buffer, reason: string, address: string) => {
    // Repeats of this line are folded by the logger: one per address and reason per window.
    logger.warn("connection refused", {reason, address});
    refusals.refuse(socket, answer);
  };

  const admitted = (socket: Socket): boolean => {
    const address = socket.remoteAddress;
    if (address === undefined) {
      // Already closed by the peer: nothing to count or answer.
      socket.destroy();
      return false;
    }
    const counted = !(settings.loopback_exempt && isLoopback(address));
    if (counted && perAddress.count(address) >= maxPerAddress) {
      refuse(socket, perAddressRefusal, "max_connections_per_address", address);
      return false;
    }
    if (open >= maxConnections) {
      refuse(socket, totalRefusal, "max_connections", address);
      return false;
    }
    open++;
    socket.once("close", () => open--);
    if (counted) perAddress.hold(address, socket);
    return true;
  };

  // node:http's own connection handling (its parser) runs only for admitted connections.
  server.admitWith(admitted);
  return {maxConnections, maxPerAddress, open: () => open};
}
