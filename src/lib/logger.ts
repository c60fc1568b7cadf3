import {redact} from "./redact.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: Record<LogLevel, number> = {debug: 10, info: 20, warn: 30, error: 40};

/** Structured JSON-lines logger (journald keeps stdout); every field passes through redaction. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export type LogSink = (line: string) => void;

export function createLogger(level: LogLevel = "info", sink: LogSink = (line) => process.stdout.write(line + "\n"), base: Record<string, unknown> = {}): Logger {
  const threshold = LEVELS[level];
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    const record = redact({time: new Date().toISOString(), level: lvl, msg, ...base, ...fields});
    sink(JSON.stringify(record));
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger(level, sink, {...base, ...fields})
  };
}
