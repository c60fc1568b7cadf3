import {SMTPServer, type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession} from "smtp-server";
import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {SupervisedWorkerStats} from "../../lib/supervised-worker.js";
import {RateLimiter} from "../../lib/rate-limiter.js";
import {tokensEqual} from "../../lib/tokens.js";
import type {InboundMail} from "../../domain/inbound-mail.js";
import {MimeParser, MimeReadError} from "./mime-parser.js";
import {capSessionsPerAddress, SessionDeadlines} from "./session-limits.js";

/** What a mail's sender is told: taken, or refused for now (retry later) or for good. */
export type MailVerdict = {accepted: true} | {accepted: false; temporary: boolean; reason: string};

/** The envelope of a mail: who the client said it is from and to, and where it connected from. */
export interface MailEnvelope {
  sender: string;
  recipients: string[];
  remoteAddress: string;
}

/** Where the listener hands what it receives; the composition root wires it to the email integrations. */
export interface MailHandler {
  /** Whether an address is one the listener takes mail for; any other RCPT is refused (never a relay). */
  accepts(address: string): boolean;
  /** A mail read; resolves, once what it caused is committed, with what its sender is told. */
  deliver(mail: InboundMail): Promise<MailVerdict>;
  /** A mail that could not be taken at all (too large, unreadable): to count and keep. */
  refuse(envelope: MailEnvelope, size: number, reason: string, excerpt: string): void;
}

export interface SmtpListenerOptions {
  port: number;
  address: string;
  /** The name the listener greets with. */
  domain: string;
  maxBytes: number;
  /** PEM certificate and key: STARTTLS is offered with them; null: not offered. */
  tls: {cert: Buffer; key: Buffer} | null;
  /** Senders must log in with these; null: no AUTH. */
  auth: {user: string; password: string} | null;
  /** Sessions one client address may hold at once; one more is answered 421. */
  maxSessionsPerAddress: number;
  /** The longest a session lasts, whatever it sends. */
  sessionMaxMs: number;
  /** Failed logins per client address and minute before AUTH from it is refused unchecked. */
  authFailuresPerMinute: number;
  /** The MIME parser's worker module; the built-in one unless a test gives one that misbehaves. */
  parserModule?: URL;
}

/** How much of a refused mail is kept for a person to read. */
const EXCERPT_BYTES = 4096;
const MAX_CLIENTS = 64;
const CLOSE_TIMEOUT_MS = 2000;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), {responseCode: code});
}

function envelopeOf(session: SMTPServerSession): MailEnvelope {
  const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
  return {
    sender,
    recipients: session.envelope.rcptTo.map((item) => item.address.toLowerCase()),
    remoteAddress: session.remoteAddress
  };
}

/**
 * The SMTP listener of email integrations (smtp-server): takes mail only for the addresses the
 * handler accepts, reads each with mailparser in a supervised worker (mime-parser.ts), and
 * answers the end of DATA only after the handler has committed what the mail caused, so a mail
 * is either an alert, kept in a log, or still the sender's to retry. Size is enforced here (552,
 * counted); SIZE is advertised without its number so that an oversized mail still reaches DATA
 * and is counted against its integration. It shares itself fairly: sessions per client address
 * are capped, each session has an absolute time limit, and failed logins are throttled per address.
 */
export class SmtpListener {
  private server: SMTPServer | null = null;
  private readonly deadlines: SessionDeadlines;
  /** Failed logins by client address, refilled at authFailuresPerMinute (the dashboard sign-in's limiter). */
  private readonly authFailures: RateLimiter;
  private readonly parser: MimeParser;

  constructor(
    private readonly options: SmtpListenerOptions,
    private readonly handler: MailHandler,
    private readonly logger: Logger,
    clock: Clock
  ) {
    this.deadlines = new SessionDeadlines(options.sessionMaxMs, (id) => this.cut(id));
    this.authFailures = new RateLimiter(options.authFailuresPerMinute / 60, options.authFailuresPerMinute, clock);
    this.parser = new MimeParser({maxBytes: options.maxBytes, logger, module: options.parserModule});
  }

  /** The MIME parser worker's counters (restarts, crashes by kind). */
  parserStats(): SupervisedWorkerStats {
    return this.parser.stats();
  }

  /** Listens; resolves with the port bound. */
  async start(): Promise<number> {
    const {options} = this;
    this.parser.start();
    const server = new SMTPServer({
      name: options.domain,
      banner: "Klaxon alert intake",
      logger: false,
      size: options.maxBytes,
      hideSize: true,
      maxClients: MAX_CLIENTS,
      // At stop, a session still open after this is cut: its mail was not answered, so its sender retries.
      closeTimeout: CLOSE_TIMEOUT_MS,
      disabledCommands: [...(options.tls ? [] : ["STARTTLS"]), ...(options.auth ? [] : ["AUTH"])],
      authOptional: options.auth === null,
      // Without a certificate there is no TLS to wait for: a configured login then goes in clear on the LAN.
      allowInsecureAuth: options.tls === null,
      ...(options.tls ? {key: options.tls.key, cert: options.tls.cert} : {}),
      onConnect: (session, done) => {
        this.deadlines.opened(session.id);
        done();
      },
      onClose: (session) => this.deadlines.closed(session.id),
      onAuth: (auth, session, done) => {
        const error = this.authenticate(auth.username ?? "", auth.password ?? "", session.remoteAddress);
        done(error, error ? undefined : {user: options.auth?.user});
      },
      onRcptTo: (address, _session, done) => {
        done(
          this.handler.accepts(address.address)
            ? null
            : smtpError(550, `5.1.1 <${address.address}>: no such integration here; this server relays no mail`)
        );
      },
      onData: (stream, session, done) => {
        const answer = (verdict: Error | null) => {
          done(verdict);
          this.deadlines.answered(session.id);
        };
        this.receive(stream, session).then(answer, (error: unknown) => {
          // A sender gone in the middle of its mail (smtp-server ends the stream with ECONNECTION)
          // is no failure of the intake: nothing was taken, and it has the mail to send again.
          if ((error as {code?: string}).code === "ECONNECTION")
            this.logger.info("a sender went away during DATA; nothing was taken", {address: session.remoteAddress});
          else
            this.logger.error("email intake failed; the sender is asked to retry", {error: (error as Error).message});
          answer(smtpError(451, "4.3.0 Temporary failure, try again later"));
        });
      }
    } satisfies SMTPServerOptions);
    server.on("error", (error) => this.logger.warn("SMTP listener error", {error: error.message}));
    capSessionsPerAddress(
      server.server,
      {maxPerAddress: options.maxSessionsPerAddress, domain: options.domain},
      this.logger
    );
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => void this.parser.stop().then(() => reject(error));
      server.server.once("error", failed);
      server.listen(options.port, options.address, () => {
        server.server.off("error", failed);
        resolve();
      });
    });
    this.server = server;
    const bound = server.server.address();
    const port = typeof bound === "object" && bound ? bound.port : options.port;
    this.logger.info("email intake listening", {address: options.address, port});
    return port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.parser.stop();
  }

  /**
   * Checks a login. While the address has spent its budget of failures the password is not even
   * compared: the answer is 421 and the close, so guessing runs at the refill rate at most. Each
   * failure is logged with the address (never what was tried); the logger folds a burst of them
   * into its first line and one count.
   */
  private authenticate(user: string, password: string, address: string): Error | null {
    if (this.authFailures.exhausted(address)) {
      this.logger.warn("SMTP login refused unchecked: too many failed logins from this address", {
        address,
        auth_failures_per_minute: this.options.authFailuresPerMinute
      });
      return smtpError(421, "4.7.0 Too many failed logins from this address, try again later");
    }
    const expected = this.options.auth;
    if (expected && tokensEqual(user, expected.user) && tokensEqual(password, expected.password)) return null;
    this.authFailures.take(address);
    this.logger.warn("SMTP login failed", {address});
    return smtpError(535, "5.7.8 Authentication failed");
  }

  /** Tells a session past its time limit so, and closes it (the sender retries what it had not sent). */
  private cut(sessionId: string): void {
    const connection = [...(this.server?.connections ?? [])].find((item) => item.id === sessionId);
    connection?.send(421, `${this.options.domain} Session time limit reached, closing`);
  }

  /** Reads the DATA stream (keeping at most maxBytes) and decides the answer; null is "250 OK". */
  private async receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<Error | null> {
    const chunks: Buffer[] = [];
    let kept = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = this.options.maxBytes - kept;
      if (room <= 0) continue;
      chunks.push(chunk.length <= room ? chunk : chunk.subarray(0, room));
      kept += Math.min(chunk.length, room);
    }
    this.deadlines.deciding(session.id);
    const raw = Buffer.concat(chunks);
    const envelope = envelopeOf(session);
    const excerpt = raw.subarray(0, EXCERPT_BYTES).toString("utf8");
    if (stream.sizeExceeded) {
      const reason = `too large: ${stream.byteLength} bytes, the limit is ${this.options.maxBytes}`;
      this.handler.refuse(envelope, stream.byteLength, reason, excerpt);
      return smtpError(552, `5.3.4 Message ${reason}`);
    }
    let mail: InboundMail;
    try {
      const parsed = await this.parser.read(raw);
      mail = {...envelope, ...parsed, sender: parsed.sender ?? envelope.sender, size: raw.length};
    } catch (error) {
      if (!(error instanceof MimeReadError)) throw error;
      if (!error.permanent) return smtpError(451, `4.3.0 ${error.message}, try again later`);
      this.handler.refuse(envelope, raw.length, error.message, excerpt);
      return smtpError(554, `5.6.0 ${error.message}`);
    }
    const verdict = await this.handler.deliver(mail);
    if (verdict.accepted) return null;
    return verdict.temporary ? smtpError(451, `4.7.1 ${verdict.reason}`) : smtpError(550, `5.7.1 ${verdict.reason}`);
  }
}
