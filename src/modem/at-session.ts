import {EventEmitter} from "node:events";
import {AtLineParser, callResultCode, classifyFinal, hasPrefix, type AtToken, type FinalResult} from "./at-parser.js";

/**
 * The byte pipe a session talks over: a SerialPort fits, and so does a tiny fake in unit tests.
 * The session only writes and reads; opening, closing and reconnecting belong to its owner.
 */
export interface AtPort {
  write(data: string | Buffer): unknown;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  removeListener(event: "data", listener: (chunk: Buffer) => void): unknown;
}

/** Per-command options; the defaults suit a plain `AT+XYZ` query. */
export interface AtCommandOptions {
  /** How long to wait for the final result (and, for two-phase commands, for the prompt). */
  timeoutMs?: number;
  /** Prefixes of the intermediate lines this command answers with, e.g. `["+CSQ:"]`. */
  prefixes?: string[];
  /**
   * Lines after each prefixed line that belong to it whatever they look like: the message text
   * after `+CMGR:`/`+CMGL:`, which a sender could shape like a URC. A final result, or another
   * prefixed line (the body was empty, and empty lines are dropped), ends the body early.
   */
  bodyLines?: number;
  /** ATD with COLP=1: BUSY / NO CARRIER / NO ANSWER / NO DIALTONE end this command. */
  callResultsAreFinal?: boolean;
  /** Two-phase command (AT+CMGS): written raw after the `> ` prompt, followed by Ctrl-Z. */
  payload?: string;
  /** Timeout for the second phase, from the moment the payload is written. */
  payloadTimeoutMs?: number;
  /** Names the command in errors instead of its text, for commands that carry a secret (CPIN). */
  label?: string;
}

/** A command that ended with OK or CONNECT. */
export interface AtResponse {
  command: string;
  /** Intermediate lines, in order, without URCs and without the final result. */
  lines: string[];
  final: FinalResult;
}

export type AtErrorKind = "error" | "cme" | "cms" | "call_result" | "timeout" | "closed";

/** Why a command did not end with OK: a final error code, a timeout, or the port going away. */
export class AtCommandError extends Error {
  constructor(
    readonly kind: AtErrorKind,
    readonly command: string,
    /** The modem's answer (`BUSY`, `+CME ERROR: 10 (SIM not inserted)`) or what went wrong locally. */
    readonly reason: string,
    answer: {code?: number | null; lines?: string[]} = {}
  ) {
    super(`${command}: ${reason}`);
    this.name = "AtCommandError";
    this.code = answer.code ?? null;
    this.lines = answer.lines ?? [];
  }

  /** Numeric +CME/+CMS code when known (also mapped back from CMEE=2 text). */
  readonly code: number | null;
  readonly lines: string[];
}

/** The modem answered the command with a refusal (ERROR, +CME or +CMS ERROR), as opposed to a timeout or a lost link. */
export function isRefusal(error: unknown): error is AtCommandError {
  return error instanceof AtCommandError && (error.kind === "error" || error.kind === "cme" || error.kind === "cms");
}

/** Events a session emits: every unsolicited line, whatever the profile makes of it. */
export interface AtSessionEvents {
  urc: [line: string];
}

interface Pending {
  command: string;
  /** What errors call the command: its text, or its label when the text is secret. */
  name: string;
  options: AtCommandOptions;
  lines: string[];
  /** Body lines still owed to the last prefixed line (see AtCommandOptions.bodyLines). */
  bodyOwed: number;
  resolve(response: AtResponse): void;
  reject(error: AtCommandError): void;
  timer?: NodeJS.Timeout;
}

const DEFAULT_TIMEOUT_MS = 5000;
const CTRL_Z = "\x1a";

/**
 * One AT conversation over one open port: a FIFO of commands with exactly one in flight, each with
 * its own timeout and expected prefixes; everything the in-flight command did not ask for is
 * emitted as `urc`. A new session is made for every (re)open, so nothing stale crosses a reconnect;
 * for the same reason the consecutive-timeout count lives in the Modem, which outlives sessions.
 */
export class AtSession extends EventEmitter<AtSessionEvents> {
  private readonly parser = new AtLineParser();
  private readonly queue: Pending[] = [];
  private current: Pending | null = null;
  private closedReason: string | null = null;
  private readonly onData = (chunk: Buffer) => this.receive(chunk);

  constructor(
    private readonly port: AtPort,
    private readonly defaultTimeoutMs = DEFAULT_TIMEOUT_MS,
    /** Profile URCs without a `+` shape (SIM800 `Call Ready`, `SMS Ready`) that must not be collected. */
    private readonly urcPrefixes: readonly string[] = []
  ) {
    super();
    port.on("data", this.onData);
  }

  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Queues `command` (without the trailing CR) and resolves on OK/CONNECT, rejects otherwise. */
  send(command: string, options: AtCommandOptions = {}): Promise<AtResponse> {
    if (this.closedReason !== null) {
      return Promise.reject(new AtCommandError("closed", options.label ?? command, this.closedReason));
    }
    return new Promise<AtResponse>((resolve, reject) => {
      this.queue.push({command, name: options.label ?? command, options, lines: [], bodyOwed: 0, resolve, reject});
      this.pump();
    });
  }

  /** Fails the in-flight and queued commands and stops listening; the owner closes the port. */
  close(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    this.port.removeListener("data", this.onData);
    const pending = this.current ? [this.current, ...this.queue] : [...this.queue];
    this.current = null;
    this.queue.length = 0;
    for (const item of pending) {
      clearTimeout(item.timer);
      item.reject(new AtCommandError("closed", item.name, reason));
    }
  }

  /** Feeds bytes as if read from the port; the port's data listener calls this too. */
  receive(chunk: Buffer | string): void {
    for (const token of this.parser.feed(chunk)) this.handle(token);
  }

  private pump(): void {
    if (this.current || this.closedReason !== null) return;
    const next = this.queue.shift();
    if (!next) return;
    this.current = next;
    this.arm(next, next.options.timeoutMs ?? this.defaultTimeoutMs);
    this.port.write(next.command + "\r");
  }

  private arm(pending: Pending, timeoutMs: number): void {
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => {
      if (this.current !== pending) return;
      this.finish(
        new AtCommandError("timeout", pending.name, `no answer within ${timeoutMs} ms`, {lines: pending.lines})
      );
    }, timeoutMs);
  }

  private handle(token: AtToken): void {
    const pending = this.current;
    if (token.kind === "prompt") {
      if (pending?.options.payload !== undefined) {
        this.arm(pending, pending.options.payloadTimeoutMs ?? pending.options.timeoutMs ?? this.defaultTimeoutMs);
        this.port.write(pending.options.payload + CTRL_Z);
      }
      return;
    }
    const line = token.text;
    if (!pending) {
      this.emit("urc", line);
      return;
    }
    // Echo (ATE1, or before ATE0 has taken effect) repeats the command or its payload: drop it.
    if (line === pending.command || line === pending.options.payload) return;
    const final = classifyFinal(line, pending.options.callResultsAreFinal === true);
    if (final) {
      this.finish(
        final.kind === "ok" || final.kind === "connect"
          ? {command: pending.name, lines: pending.lines, final}
          : toError(pending, final)
      );
      return;
    }
    const prefixes = pending.options.prefixes;
    if (pending.bodyOwed > 0 && !(prefixes && hasPrefix(line, prefixes))) {
      pending.bodyOwed -= 1;
      pending.lines.push(line);
      return;
    }
    const expected = prefixes
      ? hasPrefix(line, prefixes)
      : !looksUnsolicited(line) && !hasPrefix(line, this.urcPrefixes);
    if (expected) {
      pending.lines.push(line);
      pending.bodyOwed = pending.options.bodyLines ?? 0;
    } else {
      this.emit("urc", line);
    }
  }

  private finish(outcome: AtResponse | AtCommandError): void {
    const pending = this.current;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.current = null;
    if (outcome instanceof AtCommandError) pending.reject(outcome);
    else pending.resolve(outcome);
    this.pump();
  }
}

// A command that declared no prefixes (ATI, AT+CGSN) collects bare lines; lines shaped like a
// URC (`+XYZ:`, `^XYZ:`, RING, call results, VOICE CALL:) still go to the bus.
function looksUnsolicited(line: string): boolean {
  return (
    /^[+^][A-Z]+:/.test(line) || line === "RING" || callResultCode(line) !== null || line.startsWith("VOICE CALL:")
  );
}

function toError(pending: Pending, final: Exclude<FinalResult, {kind: "ok" | "connect"}>): AtCommandError {
  switch (final.kind) {
    case "error":
      return new AtCommandError("error", pending.name, "ERROR", {lines: pending.lines});
    case "call_result":
      return new AtCommandError("call_result", pending.name, final.code, {lines: pending.lines});
    default:
      return new AtCommandError(final.kind, pending.name, extendedErrorReason(final), {
        code: final.code,
        lines: pending.lines
      });
  }
}

// The code and its words, `+CMS ERROR: 321 (invalid memory index)`, whichever form the modem
// printed (CMEE=1 numbers, CMEE=2 words), so a log line or /readyz needs no table to be read.
function extendedErrorReason(final: {kind: "cme" | "cms"; code: number | null; message: string}): string {
  const prefix = `+${final.kind.toUpperCase()} ERROR:`;
  return final.code === null ? `${prefix} ${final.message}` : `${prefix} ${final.code} (${final.message})`;
}
