// The pure half of the AT layer: bytes in, tokens and classifications out. No I/O, no timers, so
// every framing quirk (PROTOCOLS 1.0) is pinned down by table tests.

import {codeForWords, describeErrorCode, type ExtendedErrorKind} from "./at-error-codes.js";

/** One unit read from the modem: a complete line, or the `> ` SMS prompt (which has no newline). */
export type AtToken = {kind: "line"; text: string} | {kind: "prompt"};

/**
 * Incremental splitter. Splits on `\n` and strips every `\r` (SIMCom LTE frames some URCs with
 * `\r\r\n`, some Sierra devices omit the `\r`), drops empty lines, and reports a trailing `>` as a
 * prompt token because the modem sends it without a line end and then waits for us.
 */
export class AtLineParser {
  private buffer = "";
  private heldHead: string | null = null;

  feed(chunk: string | Buffer): AtToken[] {
    // latin1 keeps one char per byte, so a multi-byte sequence split across chunks cannot corrupt.
    this.buffer += typeof chunk === "string" ? chunk : chunk.toString("latin1");
    const tokens: AtToken[] = [];
    let newline = this.buffer.indexOf("\n");
    while (newline !== -1) {
      const text = this.buffer.slice(0, newline).replace(/\r/g, "").trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (text !== "") this.line(text, tokens);
      newline = this.buffer.indexOf("\n");
    }
    if (/^\s*>\s*$/.test(this.buffer)) {
      tokens.push({kind: "prompt"});
      this.buffer = "";
    }
    return tokens;
  }

  // A PDU-mode status report is two lines, `+CDS: <length>` and the PDU: joined into one line,
  // `+CDS: <length>,<pdu>`, so that no command in flight can take the PDU for its own answer. A
  // next line that is no hex (the PDU was lost) is left alone, so an OK is never swallowed.
  private line(text: string, tokens: AtToken[]): void {
    const head = this.heldHead;
    this.heldHead = null;
    if (head !== null && /^[0-9A-Fa-f]+$/.test(text)) {
      tokens.push({kind: "line", text: `${head},${text}`});
      return;
    }
    if (head !== null) tokens.push({kind: "line", text: head});
    // A prompt with a URC right behind it in the same read ends up as a line of its own.
    if (text === ">") tokens.push({kind: "prompt"});
    else if (/^\+CDS:\s*\d+$/.test(text)) this.heldHead = text;
    else tokens.push({kind: "line", text});
  }
}

/** The outcome lines that end a call attempt; final results for ATD, URCs otherwise (COLP=0). */
export const CALL_RESULT_CODES = ["NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE"] as const;
export type CallResultCode = (typeof CALL_RESULT_CODES)[number];

/** How a final result code ended a command. */
export type FinalResult =
  | {kind: "ok"}
  | {kind: "connect"; text: string}
  | {kind: "error"}
  | {kind: ExtendedErrorKind; code: number | null; message: string}
  | {kind: "call_result"; code: CallResultCode};

/**
 * Classifies a line as a final result code, or null for anything else. Call results are finals
 * only when the caller says the in-flight command is a dial: otherwise they are URCs.
 */
export function classifyFinal(line: string, callResultsAreFinal = false): FinalResult | null {
  if (line === "OK") return {kind: "ok"};
  if (line === "ERROR") return {kind: "error"};
  if (line.startsWith("CONNECT")) return {kind: "connect", text: line};
  const extended = parseExtendedError(line);
  if (extended) return extended;
  if (callResultsAreFinal) {
    const code = callResultCode(line);
    if (code) return {kind: "call_result", code};
  }
  return null;
}

export function callResultCode(line: string): CallResultCode | null {
  return (CALL_RESULT_CODES as readonly string[]).includes(line) ? (line as CallResultCode) : null;
}

/**
 * `+CME ERROR: 16` (CMEE=1) or `+CME ERROR: incorrect password` (CMEE=2), same for +CMS: the code,
 * mapped back from the words where the modem printed words, and the specification's words for it
 * (at-error-codes.ts), or the modem's own where the table does not know them.
 */
export function parseExtendedError(
  line: string
): {kind: ExtendedErrorKind; code: number | null; message: string} | null {
  const match = /^\+(CME|CMS) ERROR:\s*(.*)$/.exec(line);
  if (!match) return null;
  const kind = match[1] === "CME" ? "cme" : "cms";
  const detail = match[2].trim();
  if (/^\d+$/.test(detail)) {
    const code = Number(detail);
    return {kind, code, message: describeErrorCode(kind, code)};
  }
  return {kind, code: codeForWords(kind, detail), message: detail};
}

/** True when the line starts with one of the prefixes (URC tables, expected response prefixes). */
export function hasPrefix(line: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => line.startsWith(prefix));
}
