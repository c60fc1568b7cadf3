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
}

const PLAIN: LogFormat = {syslogPrefix: false};

export function createLogger(
  level: LogLevel = "info",
  sink: LogSink = (line) => process.stdout.write(line + "\n"),
  base: Record<string, unknown> = {},
  format: LogFormat = PLAIN
): Logger {
  const threshold = LEVELS[level];
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    const record = redact({time: new Date().toISOString(), level: lvl, msg, ...base, ...fields});
    const json = JSON.stringify(record);
    sink(format.syslogPrefix ? `<${SYSLOG_PRIORITY[lvl]}>${json}` : json);
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger(level, sink, {...base, ...fields}, format)
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
