import type {Server, Socket} from "node:net";
import {AddressCounts, SocketRefusals} from "../../lib/connection-gate.js";
import type {Logger} from "../../lib/logger.js";

// A refused socket is kept this long so its 421 is read before the close; beyond this many at
// once they are closed unanswered (SocketRefusals says why).
const REFUSAL_LINGER_MS = 1000;
const REFUSALS_LINGERING_MAX = 64;

/** The address as smtp-server names it: an IPv4 client of a dual-stack socket without its `::ffff:`. */
function plainAddress(address: string): string {
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/**
 * Puts a gate in front of smtp-server's own session handling: its "connection" listeners run only
 * for the sockets `admit` lets in, so a refused socket costs no session and no slot of its cap.
 * smtp-server makes its net.Server itself, so the gate moves its listeners behind one of ours
 * (the HTTP server is a subclass instead: api/connections/connection-limits.ts).
 */
function gateConnections(server: Server, admit: (socket: Socket) => boolean): void {
  const handlers = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    if (admit(socket)) for (const handler of handlers) handler.call(server, socket);
  });
}

/**
 * Caps the SMTP sessions one client address holds at once. It sits in front of smtp-server, on
 * the raw sockets: one over its address's share is answered 421 and closed before smtp-server
 * counts it against its own cap of sessions in all (`maxClients`), so one host holding its share
 * can never make the listener answer 421 to every other device. Call it before the server listens.
 */
export function capSessionsPerAddress(
  server: Server,
  limits: {maxPerAddress: number; domain: string},
  logger: Logger
): void {
  const held = new AddressCounts();
  const refusals = new SocketRefusals(REFUSAL_LINGER_MS, REFUSALS_LINGERING_MAX);
  gateConnections(server, (socket: Socket) => {
    if (socket.remoteAddress === undefined) {
      // Already closed by the peer: nothing to count or answer.
      socket.destroy();
      return false;
    }
    const address = plainAddress(socket.remoteAddress);
    if (held.count(address) < limits.maxPerAddress) {
      held.hold(address, socket);
      return true;
    }
    // Repeats of this line are folded by the logger: one per address per window.
    logger.warn("SMTP session refused: this address holds as many sessions as one address may", {
      address,
      max_sessions_per_address: limits.maxPerAddress
    });
    refusals.refuse(
      socket,
      `421 ${limits.domain} Too many sessions from ${address} (at most ${limits.maxPerAddress}), try again later\r\n`
    );
    return false;
  });
}

/** What a session deadline needs of the server: to tell a session it is over and close it. */
export type CutSession = (sessionId: string) => void;

interface Deadline {
  timer: NodeJS.Timeout;
  /** The session's mail is in and its answer is being decided: the cut waits for that answer. */
  deciding: boolean;
  expired: boolean;
}

/**
 * An absolute time limit per SMTP session. smtp-server's idle timeout restarts at every command,
 * so a client sending NOOP now and then holds its session (and its slot) for ever; this limit
 * runs from the greeting and nothing extends it. A session at its limit is cut with 421, except
 * while its mail is being committed: then the cut follows the answer, so a mail taken is never
 * reported to its sender as failed (which would make it send the mail twice).
 */
export class SessionDeadlines {
  private readonly deadlines = new Map<string, Deadline>();

  constructor(
    private readonly maxMs: number,
    private readonly cut: CutSession
  ) {}

  opened(sessionId: string): void {
    const timer = setTimeout(() => this.expire(sessionId), this.maxMs);
    timer.unref();
    this.deadlines.set(sessionId, {timer, deciding: false, expired: false});
  }

  /** The session's mail has been received in full; its answer is on the way. */
  deciding(sessionId: string): void {
    const deadline = this.deadlines.get(sessionId);
    if (deadline) deadline.deciding = true;
  }

  /** The answer to the session's mail has been sent. */
  answered(sessionId: string): void {
    const deadline = this.deadlines.get(sessionId);
    if (!deadline) return;
    deadline.deciding = false;
    if (deadline.expired) this.cut(sessionId);
  }

  closed(sessionId: string): void {
    const deadline = this.deadlines.get(sessionId);
    if (deadline) clearTimeout(deadline.timer);
    this.deadlines.delete(sessionId);
  }

  private expire(sessionId: string): void {
    const deadline = this.deadlines.get(sessionId);
    if (!deadline) return;
    deadline.expired = true;
    if (!deadline.deciding) this.cut(sessionId);
  }
}
