import {fstatSync} from "node:fs";
import {redact} from "./redact.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: Record<LogLevel, number> = {debug: 10, info: 20, warn: 30, error: 40};

/** The syslog priority of each level, as journald reads it from a `<N>` line prefix (sd-daemon(3)). */
export const SYSLOG_PRIORITY: Record<LogLevel, number> = {error: 3, warn: 4, info: 6, debug: 7};

/** Structured JSON-lines logger (journald keeps stdout); every field passes through redaction. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export type LogSink = (line: string) => void;

/** How lines are written beyond their JSON. */
export interface LogFormat {
  /** Start each line with `<N>`, its syslog priority, so journald files it at that level (`journalctl -p warning`). */
  syslogPrefix: boolean;
  /** Identical lines (level, message and fields) within this window are written once, then counted; default 10 s, 0 writes every line. */
  foldRepeatsMs?: number;
}

const PLAIN: LogFormat = {syslogPrefix: false};
const FOLD_WINDOW_MS = 10_000;
// Distinct lines being counted at once; beyond it new ones are written unfolded rather than remembered.
const MAX_FOLDED_KEYS = 1_000;
// What differs on every request even when the failure is the same: a warning or error that differs
// only in these is a repeat (its first occurrence keeps its values). Debug and info lines keep them
// apart, so each ordinary request still has its own line.
const PER_REQUEST_FIELDS = ["ms", "request_id"];

interface Fold {
  repeats: number;
  record: Record<string, unknown>;
  lvl: LogLevel;
}

/**
 * Folds repeated lines so one failure that repeats (a full disk failing every request) cannot
 * flood the journal: the first is written, the repeats within the window are counted, and at the
 * window's end one line says `repeated: N`; while they go on, one such line per window.
 */
class RepeatFolder {
  private readonly folds = new Map<string, Fold>();

  constructor(
    private readonly windowMs: number,
    private readonly write: (lvl: LogLevel, record: Record<string, unknown>) => void
  ) {}

  /** True when the line is to be written now. */
  admit(lvl: LogLevel, record: Record<string, unknown>): boolean {
    if (this.windowMs <= 0) return true;
    const key = JSON.stringify([
      lvl,
      LEVELS[lvl] >= LEVELS.warn
        ? {...record, ...Object.fromEntries(PER_REQUEST_FIELDS.map((field) => [field, undefined]))}
        : record
    ]);
    const fold = this.folds.get(key);
    if (fold) {
      fold.repeats++;
      return false;
    }
    if (this.folds.size >= MAX_FOLDED_KEYS) return true;
    this.folds.set(key, {repeats: 0, record, lvl});
    this.closeWindowLater(key);
    return true;
  }

  private closeWindowLater(key: string): void {
    setTimeout(() => {
      const fold = this.folds.get(key);
      if (!fold) return;
      if (fold.repeats === 0) {
        this.folds.delete(key);
        return;
      }
      this.write(fold.lvl, {...fold.record, repeated: fold.repeats, repeated_within_seconds: this.windowMs / 1000});
      fold.repeats = 0;
      this.closeWindowLater(key);
    }, this.windowMs).unref();
  }
}

export function createLogger(
  level: LogLevel = "info",
  sink: LogSink = (line) => process.stdout.write(line + "\n"),
  base: Record<string, unknown> = {},
  format: LogFormat = PLAIN
): Logger {
  const emit = (lvl: LogLevel, record: Record<string, unknown>) => {
    const json = JSON.stringify({time: new Date().toISOString(), level: lvl, ...record});
    sink(format.syslogPrefix ? `<${SYSLOG_PRIORITY[lvl]}>${json}` : json);
  };
  return buildLogger(LEVELS[level], base, emit, new RepeatFolder(format.foldRepeatsMs ?? FOLD_WINDOW_MS, emit));
}

function buildLogger(
  threshold: number,
  base: Record<string, unknown>,
  emit: (lvl: LogLevel, record: Record<string, unknown>) => void,
  folder: RepeatFolder
): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    const record = redact({msg, ...base, ...fields}) as Record<string, unknown>;
    if (folder.admit(lvl, record)) emit(lvl, record);
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => buildLogger(threshold, {...base, ...fields}, emit, folder)
  };
}

/**
 * Whether stdout is the journal stream systemd named in JOURNAL_STREAM (`device:inode`). Comparing
 * the file, not just the variable's presence, matters: the variable is inherited, so a process a
 * service started with its output sent elsewhere (a pipe, a file, a terminal) still has it.
 */
export function stdoutIsJournal(journalStream: string | null | undefined): boolean {
  if (!journalStream) return false;
  try {
    const stat = fstatSync(1, {bigint: true});
    return `${stat.dev}:${stat.ino}` === journalStream;
  } catch {
    return false;
  }
}

/** The line format for a `log.syslog_prefix` setting: `auto` prefixes only when stdout is the journal. */
export function logFormatFor(syslogPrefix: "auto" | "on" | "off", journalStream: string | null | undefined): LogFormat {
  return {syslogPrefix: syslogPrefix === "on" || (syslogPrefix === "auto" && stdoutIsJournal(journalStream))};
}
