import type {Socket} from "node:net";

/** Sockets held per client address, each counted until it closes. */
export class AddressCounts {
  private readonly held = new Map<string, number>();

  count(address: string): number {
    return this.held.get(address) ?? 0;
  }

  hold(address: string, socket: Socket): void {
    this.held.set(address, this.count(address) + 1);
    socket.once("close", () => {
      const left = this.count(address) - 1;
      if (left <= 0) this.held.delete(address);
      else this.held.set(address, left);
    });
  }
}

/**
 * Refuses sockets with a last answer. A refused socket is kept `lingerMs` so its answer is read
 * before the close (unread bytes at the close can reset the connection and lose the answer);
 * beyond `maxLingering` at once they are closed unanswered, so refusals themselves cannot hold
 * the descriptors a cap protects.
 */
export class SocketRefusals {
  private lingering = 0;

  constructor(
    private readonly lingerMs: number,
    private readonly maxLingering: number
  ) {}

  refuse(socket: Socket, answer: string | Buffer): void {
    socket.on("error", () => undefined);
    if (this.lingering >= this.maxLingering) {
      socket.destroy();
      return;
    }
    this.lingering++;
    socket.once("close", () => this.lingering--);
    // Whatever the client sends is read and dropped.
    socket.resume();
    socket.end(answer);
    setTimeout(() => socket.destroy(), this.lingerMs).unref();
  }
}
