import type {Logger} from "../../lib/logger.js";
import {
  SupervisedWorker,
  workerModule,
  type SupervisedWorkerStats,
  type WorkerCrash
} from "../../lib/supervised-worker.js";
import type {ParsedMime} from "./mail-reader.js";

/** One mail for the worker: its bytes, moved (not copied) to the worker's thread. */
export interface MimeWork {
  id: number;
  raw: Uint8Array;
}

/** The worker's answer for one mail: what it read, or why it could not read it. */
export type MimeAnswer = {id: number; mail: ParsedMime} | {id: number; error: string};

/** Why a mail was not read: a permanent one is refused (554), otherwise its sender is asked to retry (451). */
export class MimeReadError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean
  ) {
    super(message);
  }
}

export interface MimeParserOptions {
  /** The listener's size limit: the worker's heap grows with it, and no text is longer. */
  maxBytes: number;
  logger: Logger;
  /** The worker module; by default mime-parser.worker beside this file (tests give one that misbehaves). */
  module?: URL;
}

// Mails waiting for the worker at most (smtp-server serves 64 sessions at once); one more is asked to retry.
const QUEUE_MAX = 64;
// The longest a mail waits and is read: a mail still waiting then (no worker came back) is asked to
// retry; one still being read (a promise in the worker that never settles) is given up for good.
const READ_LIMIT_MS = 30_000;
const SENDER_MAX_CHARS = 512;
const SUBJECT_MAX_CHARS = 4096;
const MIB = 1024 * 1024;

interface Pending {
  id: number;
  raw: Buffer;
  timer: NodeJS.Timeout;
  resolve(mail: ParsedMime): void;
  reject(error: MimeReadError): void;
}

/** The worker is as untrusted as the mail: only an answer of the right shape, cut to size, is used. */
function validAnswer(answer: unknown, maxChars: number): {id: number; mail?: ParsedMime; error?: string} | null {
  if (typeof answer !== "object" || answer === null || typeof (answer as {id?: unknown}).id !== "number") return null;
  const {id, mail, error} = answer as {id: number; mail?: Partial<ParsedMime>; error?: unknown};
  if (typeof error === "string") return {id, error: error.slice(0, SUBJECT_MAX_CHARS)};
  if (!mail || typeof mail.subject !== "string" || typeof mail.text !== "string") return null;
  if (mail.sender !== null && typeof mail.sender !== "string") return null;
  return {
    id,
    mail: {
      sender: mail.sender ? mail.sender.slice(0, SENDER_MAX_CHARS) : null,
      subject: mail.subject.slice(0, SUBJECT_MAX_CHARS),
      text: mail.text.slice(0, maxChars)
    }
  };
}

/**
 * Reads mails' MIME behind a bulkhead (design rule 14): mailparser runs in a supervised worker
 * thread, so a hostile mail that makes it throw, hang or eat memory ends that worker (logged,
 * counted, restarted with back-off), never the gateway. Mails are read one at a time, so the one
 * in the worker when it ends is the one that ended it: it is refused for good (554). Mails that
 * come while no worker runs (loading at start, restarting after a crash) wait for the next one.
 */
export class MimeParser {
  private readonly worker: SupervisedWorker<MimeWork, unknown>;
  private readonly queue: Pending[] = [];
  private current: Pending | null = null;
  private nextId = 1;

  constructor(private readonly options: MimeParserOptions) {
    this.worker = new SupervisedWorker<MimeWork, unknown>({
      name: "mime-parser",
      module: options.module ?? workerModule(import.meta.url, "./mime-parser.worker"),
      onEvent: (answer) => this.answered(answer),
      onCrash: (crash) => this.crashed(crash),
      onReady: () => this.next(),
      logger: options.logger,
      // mailparser keeps the mail and its decoded parts at once: a heap of 8 times the largest mail, 64 MB at least.
      resourceLimits: {
        maxOldGenerationSizeMb: Math.max(64, Math.ceil((options.maxBytes * 8) / MIB)),
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4
      }
    });
  }

  /**
   * Starts the worker without waiting for it: loading mailparser (and, from TypeScript, the
   * compiler) takes a second or more on a small box, and mails that come sooner wait. A worker
   * that cannot load at all is logged; mails then wait out their limit and are asked to retry.
   */
  start(): void {
    this.worker.start().catch((error: unknown) =>
      this.options.logger.error("the MIME parser worker could not start; every mail is asked to retry", {
        error: (error as Error).message
      })
    );
  }

  async stop(): Promise<void> {
    const stopping = new MimeReadError("the listener is stopping", false);
    for (const pending of this.queue.splice(0)) this.settle(pending, stopping);
    this.finish(stopping);
    await this.worker.stop();
  }

  stats(): SupervisedWorkerStats {
    return this.worker.stats();
  }

  /** Reads one mail; rejects with a MimeReadError. */
  read(raw: Buffer): Promise<ParsedMime> {
    if (this.queue.length >= QUEUE_MAX)
      return Promise.reject(new MimeReadError("too many mails are waiting to be read", false));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => this.overdue(id), READ_LIMIT_MS);
      timer.unref();
      this.queue.push({id, raw, timer, resolve, reject});
      this.next();
    });
  }

  private next(): void {
    if (this.current || !this.queue.length || !this.worker.stats().running) return;
    const pending = this.queue[0];
    const bytes = new Uint8Array(pending.raw);
    // Not posted (the worker just ended): it stays first in line for the next worker.
    if (!this.worker.post({id: pending.id, raw: bytes}, [bytes.buffer])) return;
    this.queue.shift();
    this.current = pending;
  }

  private overdue(id: number): void {
    if (this.current?.id === id)
      return this.finish(new MimeReadError(`reading it took over ${READ_LIMIT_MS / 1000} s`, true));
    const index = this.queue.findIndex((pending) => pending.id === id);
    if (index >= 0)
      this.settle(this.queue.splice(index, 1)[0], new MimeReadError("no MIME parser worker is running", false));
  }

  private answered(event: unknown): void {
    const answer = validAnswer(event, this.options.maxBytes);
    // A late answer for a mail already given up on is dropped.
    if (!this.current || (answer && answer.id !== this.current.id)) return;
    if (!answer) this.finish(new MimeReadError("the MIME parser answered in a shape it may not", true));
    else if (answer.mail) this.finish(null, answer.mail);
    else this.finish(new MimeReadError(`unreadable MIME: ${answer.error}`, true));
  }

  private crashed(crash: WorkerCrash): void {
    this.finish(new MimeReadError(`the MIME parser ended while reading it (${crash.kind}: ${crash.detail})`, true));
  }

  private finish(error: MimeReadError | null, mail?: ParsedMime): void {
    const current = this.current;
    if (!current) return;
    this.current = null;
    this.settle(current, error, mail);
    this.next();
  }

  private settle(pending: Pending, error: MimeReadError | null, mail?: ParsedMime): void {
    clearTimeout(pending.timer);
    if (error) pending.reject(error);
    else pending.resolve(mail as ParsedMime);
  }
}
