import {SMTPServer, type SMTPServerOptions, type SMTPServerSession} from "smtp-server";

/** One MIME part (or the whole message), decoded enough for assertions. */
export interface MimePart {
  headers: Map<string, string>;
  contentType: string;
  body: string;
  parts: MimePart[];
}

/** A message the peer accepted: its envelope, raw bytes and the decoded parts tests look at. */
export interface ReceivedMail {
  envelope: {from: string; to: string[]};
  raw: string;
  headers: Map<string, string>;
  subject: string;
  text: string | null;
  html: string | null;
}

/** How the peer answers, switchable while it runs. */
export type PeerBehaviour = "accept" | "defer" | "hang" | "slow_greeting" | "slow_data";

/**
 * A loopback SMTP server on the `smtp-server` package, with the failures an alert mailer meets:
 * a login it refuses with 535, recipients it rejects with 550, a temporary 451 for every
 * message (`defer`), a server that accepts the connection and never greets (`hang`), one that
 * greets or answers the end of DATA only after `slowMs` (`slow_greeting`, `slow_data`: the
 * message is then kept, as a real server that queued it before its reply got lost would), and a
 * server that is down (`down()` closes the port, `up()` opens the same port again).
 * STARTTLS is not offered (smtp-server's built-in certificate has expired), so mail is plain.
 */
export interface SmtpPeer {
  port: number;
  messages: ReceivedMail[];
  /** Messages refused at the end of DATA for going over `size`. */
  refusedForSize: number;
  /** Logins the peer saw, right or wrong, with the password as sent. */
  logins: Array<{username: string; password: string}>;
  behaviour: PeerBehaviour;
  /** How long `slow_greeting` and `slow_data` keep the client waiting. */
  slowMs: number;
  /** The next message to arrive (or one that arrived and was not yet awaited). */
  next(): Promise<ReceivedMail>;
  rejectRecipient(address: string): void;
  /** The mailbox exists again (it was fixed on the server): the address is accepted once more. */
  acceptRecipient(address: string): void;
  /** The mailbox password changes on the server: the login the gateway has stops working. */
  changePassword(password: string): void;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

export interface SmtpPeerOptions {
  /** Require this login; without it the peer takes mail from anyone. */
  auth?: {user: string; password: string};
  /** Offer STARTTLS with smtp-server's built-in (expired) certificate. */
  offerStartTls?: boolean;
  /** Refuse a message over this many bytes with 552 5.3.4, as Postfix's message_size_limit does. */
  size?: number;
  /** With `size`: do not advertise it (no SIZE extension), so the refusal comes at the end of DATA. */
  hideSize?: boolean;
}

function unfoldHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return headers;
}

// RFC 2047 encoded words, as nodemailer writes non-ASCII subjects and names.
function decodeWords(value: string): string {
  return value.replace(
    /=\?([^?]+)\?([BQbq])\?([^?]*)\?=(\s+(?==\?))?/g,
    (_match, _charset, encoding: string, text: string) =>
      encoding.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replace(/_/g, " "))
  );
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const flat = text.replace(/=\r?\n/g, "");
  for (let i = 0; i < flat.length; i++) {
    if (flat[i] === "=" && /^[0-9A-Fa-f]{2}$/.test(flat.slice(i + 1, i + 3))) {
      bytes.push(parseInt(flat.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(flat[i], "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Parses a message or part: headers, transfer decoding, and multipart bodies recursively. */
export function parseMime(raw: string): MimePart {
  const split = raw.indexOf("\r\n\r\n");
  const headers = unfoldHeaders(split < 0 ? raw : raw.slice(0, split));
  const content = split < 0 ? "" : raw.slice(split + 4);
  const contentType = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (contentType.toLowerCase().startsWith("multipart/") && boundary) {
    const sections = content.split(`--${boundary}`).slice(1);
    const parts = sections
      .filter((section) => !section.startsWith("--"))
      .map((section) => parseMime(section.replace(/^\r\n/, "").replace(/\r\n$/, "")));
    return {headers, contentType, body: "", parts};
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const body =
    encoding === "base64"
      ? Buffer.from(content.replace(/\s+/g, ""), "base64").toString("utf8")
      : encoding === "quoted-printable"
        ? decodeQuotedPrintable(content)
        : content;
  return {headers, contentType, body, parts: []};
}

function findPart(part: MimePart, type: string): string | null {
  if (part.parts.length === 0) return part.contentType.toLowerCase().startsWith(type) ? part.body : null;
  for (const child of part.parts) {
    const found = findPart(child, type);
    if (found !== null) return found;
  }
  return null;
}

function readMail(raw: string, envelope: ReceivedMail["envelope"]): ReceivedMail {
  const root = parseMime(raw);
  return {
    envelope,
    raw,
    headers: root.headers,
    subject: root.headers.get("subject") ?? "",
    text: findPart(root, "text/plain"),
    html: findPart(root, "text/html")
  };
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), {responseCode});
}

export async function startSmtpPeer(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  const rejected = new Set<string>();
  const authRequired = options.auth ? {...options.auth} : null;
  const waiting: Array<(mail: ReceivedMail) => void> = [];
  const unclaimed: ReceivedMail[] = [];
  let server: SMTPServer;
  let port = 0;

  const serverOptions: SMTPServerOptions = {
    secure: false,
    logger: false,
    // Pooled client connections are cut at once when the test takes the server down.
    closeTimeout: 50,
    disabledCommands: [...(options.offerStartTls ? [] : ["STARTTLS"]), ...(options.auth ? [] : ["AUTH"])],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    ...(options.size ? {size: options.size, hideSize: options.hideSize ?? false, rejectOversized: true} : {}),
    onConnect(_session, callback) {
      // A hanging server: the connection is accepted and never greeted.
      if (peer.behaviour === "slow_greeting") setTimeout(() => callback(), peer.slowMs);
      else if (peer.behaviour !== "hang") callback();
    },
    onAuth(auth, _session, callback) {
      const login = authRequired;
      peer.logins.push({username: auth.username ?? "", password: auth.password ?? ""});
      if (auth.username === login?.user && auth.password === login?.password)
        return callback(null, {user: auth.username});
      callback(smtpError("Authentication credentials invalid", 535));
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase()))
        return callback(smtpError(`<${address.address}>: Recipient address rejected: User unknown`, 550));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if ((stream as {sizeExceeded?: boolean}).sizeExceeded) {
          peer.refusedForSize++;
          return callback(smtpError("Error: message exceeds fixed maximum message size", 552));
        }
        if (peer.behaviour === "slow_data")
          return void setTimeout(() => accept(session, chunks, callback), peer.slowMs);
        if (peer.behaviour === "defer") return callback(smtpError("Requested action aborted: try again later", 451));
        accept(session, chunks, callback);
      });
    }
  };

  function accept(session: SMTPServerSession, chunks: Buffer[], callback: (error?: Error | null) => void): void {
    const envelope = {
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
      to: session.envelope.rcptTo.map((rcpt) => rcpt.address)
    };
    const mail = readMail(Buffer.concat(chunks).toString("utf8"), envelope);
    peer.messages.push(mail);
    const waiter = waiting.shift();
    if (waiter) waiter(mail);
    else unclaimed.push(mail);
    callback();
  }

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = new SMTPServer(serverOptions);
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        // A client that gives up mid-transaction (slow_data) resets the connection: a server logs that and goes on.
        server.on("error", () => undefined);
        port = (server.server.address() as {port: number}).port;
        resolve();
      });
    });
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));

  const peer: SmtpPeer = {
    port: 0,
    messages: [],
    refusedForSize: 0,
    logins: [],
    behaviour: "accept",
    slowMs: 3000,
    next() {
      const ready = unclaimed.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    rejectRecipient(address) {
      rejected.add(address.toLowerCase());
    },
    acceptRecipient(address) {
      rejected.delete(address.toLowerCase());
    },
    changePassword(password) {
      if (!authRequired) throw new Error("this peer takes mail without a login");
      authRequired.password = password;
    },
    down: close,
    up: listen,
    stop: close
  };
  await listen();
  peer.port = port;
  return peer;
}
