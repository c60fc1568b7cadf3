import {readableTime} from "../lib/local-time.js";
import {redactString} from "../lib/redact.js";

/** Where a command writes: stdout for results, stderr for notes and errors. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: Output = {
  out: (text) => void process.stdout.write(text + "\n"),
  err: (text) => void process.stderr.write(text + "\n")
};

export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export type Cell = string | number | boolean | null | undefined;

function cellText(value: Cell): string {
  if (value === null || value === undefined || value === "") return "-";
  return String(value);
}

/** Label/value lines with the values aligned: the human form of one resource. */
export function fieldsText(rows: Array<[string, Cell]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${cellText(value)}`).join("\n");
}

/** A table with a header row and aligned columns; the last column is not padded. */
export function tableText(headers: string[], rows: Cell[][]): string {
  const cells = [headers, ...rows.map((row) => row.map(cellText))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  return cells
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ")
    )
    .join("\n");
}

/**
 * An API time (ISO 8601) as a person reads it: in `timeZone` (a recipient's or schedule's) or this
 * machine's zone, with the zone's abbreviation. `--json` keeps the API's ISO text untouched.
 */
export function timeText(iso: string | null | undefined, timeZone?: string): string {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? (iso ?? "") : readableTime(ms, timeZone);
}

/** Shortens free text for one table cell, on one line. */
export function clip(text: string | null | undefined, max = 48): string {
  const line = (text ?? "").replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

export function list(values: readonly string[] | null | undefined): string {
  return values && values.length ? values.join(", ") : "-";
}

/** Error text passes through the gateway's redaction, and loses any secret this run was given. */
export function scrub(text: string, secrets: readonly string[]): string {
  return secrets.reduce((acc, secret) => acc.split(secret).join("[redacted]"), redactString(text));
}
