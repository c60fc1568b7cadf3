import {readFileSync} from "node:fs";
import type {Server} from "node:http";

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

/** Listens on host:port with `backlog`; rejects with the listen error (its code, such as EADDRINUSE, kept). */
export function listenWithBacklog(server: Server, host: string, port: number, backlog: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    server.listen({host, port, backlog}, () => {
      server.off("error", failed);
      resolve();
    });
  });
}
