import {connect, type Socket} from "node:net";

/** One SMTP reply: its code and its lines' text joined by newlines. */
export interface SmtpReply {
  code: number;
  text: string;
}

/**
 * A raw SMTP client session on loopback, for what no well-behaved client does: many sessions
 * from one address, commands at any moment, bytes no MTA would send. It reads replies as
 * RFC 5321 frames them (`ddd-` continues, `ddd ` ends a reply).
 */
export interface RawSmtpSession {
  /** Writes bytes as they are (add the CRLF yourself). */
  write(bytes: string | Buffer): void;
  /** The next reply, or null once the server has closed the connection (or after `timeoutMs`). */
  reply(timeoutMs?: number): Promise<SmtpReply | null>;
  /** Writes `line` + CRLF and waits for its reply. */
  command(line: string, timeoutMs?: number): Promise<SmtpReply | null>;
  /** True once the server closed the connection (or it failed). */
  readonly closed: boolean;
  /** Resolves once the connection is closed. */
  whenClosed(): Promise<void>;
  destroy(): void;
}

/** Connects from `from` (any 127.0.0.0/8 address plays another host) and waits for the greeting or the close. */
export async function openRawSmtp(
  port: number,
  from = "127.0.0.1"
): Promise<{session: RawSmtpSession; greeting: SmtpReply | null}> {
  const socket: Socket = connect({host: "127.0.0.1", port, localAddress: from});
  const replies: SmtpReply[] = [];
  const waiters: Array<(reply: SmtpReply | null) => void> = [];
  let buffered = "";
  let lines: string[] = [];
  let closed = false;
  const closedPromise = new Promise<void>((resolve) => socket.once("close", () => resolve()));

  const deliver = (reply: SmtpReply | null) => {
    const waiter = waiters.shift();
    if (waiter) waiter(reply);
    else if (reply) replies.push(reply);
  };
  socket.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("latin1");
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).replace(/\r$/, "");
      buffered = buffered.slice(end + 1);
      lines.push(line.slice(4));
      if (line[3] !== "-") {
        deliver({code: Number(line.slice(0, 3)), text: lines.join("\n")});
        lines = [];
      }
    }
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
    while (waiters.length) deliver(null);
  });

  const session: RawSmtpSession = {
    write: (bytes) => {
      if (!closed && socket.writable) socket.write(bytes);
    },
    reply: (timeoutMs = 5000) => {
      const next = replies.shift();
      if (next) return Promise.resolve(next);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          resolve(null);
        }, timeoutMs);
        const waiter = (reply: SmtpReply | null) => {
          clearTimeout(timer);
          resolve(reply);
        };
        waiters.push(waiter);
      });
    },
    command: (line, timeoutMs) => {
      session.write(`${line}\r\n`);
      return session.reply(timeoutMs);
    },
    get closed() {
      return closed;
    },
    whenClosed: () => closedPromise,
    destroy: () => socket.destroy()
  };
  const greeting = await session.reply();
  return {session, greeting};
}

/** The argument of `AUTH PLAIN` for a user and password (RFC 4616). */
export function authPlain(user: string, password: string): string {
  return Buffer.from(`\0${user}\0${password}`).toString("base64");
}
