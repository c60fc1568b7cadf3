import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";

type ServerState = "unknown" | "ok" | "failing";

/** What SmtpServerMonitor works with, by name. */
export interface SmtpServerMonitorDeps {
  verify: () => Promise<unknown>;
  describeFailure: (error: unknown) => string;
  recheckMs: number;
  clock: Clock;
  logger: Logger;
}

/**
 * Whether the SMTP server can be used, from every send and every check. Once a failure shows
 * the server itself is the problem (down, timing out, refusing the login), email is reported
 * unavailable, so escalations move to the next channel at once instead of waiting out an ack
 * timeout on a mail that cannot leave, and a check (connect, log in, quit) runs every
 * `recheckMs` until one passes.
 */
export class SmtpServerMonitor {
  private state: ServerState = "unknown";
  private since: string | null = null;
  private lastSuccessAt: string | null = null;
  private lastFailureAt: string | null = null;
  private lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private running = false;

  constructor(private readonly deps: SmtpServerMonitorDeps) {}

  get failingReason(): string | null {
    return this.state === "failing" ? this.lastError : null;
  }

  snapshot(): Record<string, unknown> {
    return {
      state: this.state,
      since: this.since,
      last_success_at: this.lastSuccessAt,
      last_failure_at: this.lastFailureAt,
      last_error: this.lastError
    };
  }

  /** Checks once now (without waiting for it) and keeps checking while the server fails. */
  start(): void {
    this.running = true;
    void this.check();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.checking;
  }

  /** One check: connect, greet, start TLS when offered, log in, quit. Never throws. */
  check(): Promise<void> {
    this.checking ??= this.deps
      .verify()
      .then(
        () => this.succeeded(),
        // A check only talks to the server, so whatever fails it is the server's problem.
        (error: unknown) => this.failed(this.deps.describeFailure(error))
      )
      .finally(() => {
        this.checking = null;
      });
    return this.checking;
  }

  succeeded(): void {
    const now = isoTimestamp(this.deps.clock.now());
    if (this.state === "failing") this.deps.logger.info("SMTP server works again", {down_since: this.since});
    if (this.state !== "ok") this.since = now;
    this.state = "ok";
    this.lastSuccessAt = now;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * A failure of the server itself. A refusal of one address is not one, and is not kept here
   * either: /readyz needs no key, and such a reply names the person.
   */
  failed(reason: string): void {
    const now = isoTimestamp(this.deps.clock.now());
    this.lastFailureAt = now;
    this.lastError = reason;
    if (this.state !== "failing") {
      this.deps.logger.warn("SMTP server failing: email is unavailable until a check passes", {
        reason,
        recheck_seconds: this.deps.recheckMs / 1000
      });
      this.since = now;
    }
    this.state = "failing";
    this.scheduleRecheck();
  }

  private scheduleRecheck(): void {
    if (!this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, this.deps.recheckMs);
    this.timer.unref();
  }
}
