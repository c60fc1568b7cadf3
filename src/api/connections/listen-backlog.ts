import {readFileSync} from "node:fs";
import {createServer, type AddressInfo, type ListenOptions, type Server} from "node:net";
import type {AdmittingServer} from "./connection-limits.js";

/** Node's own listen backlog, used where the system's cannot be read (not Linux). */
const NODE_DEFAULT_BACKLOG = 511;

/**
 * The listen backlog: the system's net.core.somaxconn, the most the kernel queues for a socket.
 * Node asks for 511 whatever the system allows; a plant-wide storm of a thousand devices connecting
 * at once overflowed that queue, and each connection dropped there waited for its SYN to be resent
 * (1 s, then 3 s): a tail of seconds with the gateway idle (docs/benchmarks.md, the storm).
 */
export function listenBacklog(somaxconnFile = "/proc/sys/net/core/somaxconn"): number {
  try {
    const value = Number(readFileSync(somaxconnFile, "utf8").trim());
    return Number.isInteger(value) && value > 0 ? value : NODE_DEFAULT_BACKLOG;
  } catch {
    return NODE_DEFAULT_BACKLOG;
  }
}

/**
 * How many sockets listen on the gateway's port (Linux, SO_REUSEPORT). libuv, since 1.45 (Node
 * 20), accepts one connection per listening socket per turn of the event loop, and in a storm each
 * turn also serves the request of every kept-alive connection that has one: a thousand devices
 * connecting at once were accepted one per turn over the whole storm (about 5 ms a turn on one
 * core), the last after 5 s, their first requests waiting in the kernel all that time
 * (docs/benchmarks.md, the storm). The kernel spreads new connections over the sockets, so a turn
 * accepts up to this many: a thousand in about 25 turns. 16 sockets (about 90 turns) still left
 * the last accepts a second late on a loaded core. An idle socket costs a descriptor (of those
 * connection-limits.ts keeps back) and nothing per turn.
 */
export const LISTENING_SOCKETS = 64;

// A connection accepted beside the server's own socket gets what node:http asks of its own: half-open
// allowed (the parser answers a request whose client already ended its side) and no Nagle delay.
const ACCEPTOR_OPTIONS = {allowHalfOpen: true, noDelay: true};

function listenOn(server: Server, options: ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    server.listen(options, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

/**
 * Listens on host:port with `backlog` from `sockets` listening sockets (one off Linux, whose
 * SO_REUSEPORT alone spreads connections over them); rejects with the listen error (its code, such
 * as EADDRINUSE, kept), nothing left listening. Another program on the port is still refused: the
 * kernel shares a port only among sockets that all ask for it, of one user, and boot/main.ts binds
 * the port once without sharing before the gateway starts.
 */
export async function listenWithBacklog(
  server: AdmittingServer,
  address: {host: string; port: number},
  backlog: number,
  sockets = LISTENING_SOCKETS
): Promise<void> {
  const shared = sockets > 1 && process.platform === "linux";
  const {host} = address;
  await listenOn(server, {host, port: address.port, backlog, reusePort: shared});
  if (!shared) return;
  // Port 0 asked for any free port: the others join the one the first was given.
  const {port} = server.address() as AddressInfo;
  try {
    for (let index = 1; index < sockets; index++) {
      const acceptor = createServer(ACCEPTOR_OPTIONS);
      server.addAcceptor(acceptor);
      await listenOn(acceptor, {host, port, backlog, reusePort: true});
    }
  } catch (error) {
    await new Promise<void>((done) => server.close(() => done()));
    throw error;
  }
}
