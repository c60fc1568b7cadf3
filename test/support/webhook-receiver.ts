import {createServer, type IncomingHttpHeaders, type ServerResponse} from "node:http";
import type {AddressInfo} from "node:net";
import {vi} from "vitest";
import {Webhook} from "standardwebhooks";
import type {Clock} from "../../src/lib/clock.js";

/** How the receiver answers one request: a status (with headers), or no answer at all. */
export type Reply = {status: number; headers?: Record<string, string>} | "hang";

/** A request as the receiver got it: raw body bytes, headers, and the sender's clock at arrival. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAtMs: number;
}

/** A loopback webhook receiver on 127.0.0.1 answering from a script; 200 once the script runs out. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Queues answers for the next requests, in order. */
  script(...replies: Reply[]): void;
  /** Resolves with the next request to arrive (or one that already arrived and was not yet awaited). */
  next(): Promise<ReceivedDelivery>;
  /** The receiver goes away: its port refuses connections until `up()` listens on it again. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(clock: Clock): Promise<WebhookReceiver> {
  const replies: Reply[] = [];
  const received: ReceivedDelivery[] = [];
  const waiters: Array<(delivery: ReceivedDelivery) => void> = [];
  let awaited = 0;
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const delivery = {
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAtMs: clock.now()
      };
      received.push(delivery);
      const reply = replies.shift() ?? {status: 200};
      if (reply === "hang") hanging.push(response);
      else response.writeHead(reply.status, reply.headers).end();
      if (waiters.length) {
        awaited++;
        waiters.shift()?.(delivery);
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const {port} = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((done) => {
      for (const response of hanging) response.destroy();
      if (!server.listening) return done();
      server.close(() => done());
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    script: (...more) => void replies.push(...more),
    next: () =>
      awaited < received.length
        ? Promise.resolve(received[awaited++])
        : new Promise((resolve) => waiters.push(resolve)),
    down: close,
    up: () => new Promise<void>((done) => server.listen(port, "127.0.0.1", done)),
    close
  };
}

/**
 * Verifies a delivery with the stock `standardwebhooks` verifier, as a receiver whose clock agrees
 * with the gateway's would at the moment it arrived (the library reads Date.now()). Returns the
 * parsed body; throws as the library does when the signature or the timestamp is wrong.
 */
export function verifyDelivery(delivery: ReceivedDelivery, secret: string): any {
  vi.useFakeTimers({toFake: ["Date"], now: delivery.receivedAtMs});
  try {
    return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  } finally {
    vi.useRealTimers();
  }
}
