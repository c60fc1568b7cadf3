import type {ApiClient} from "./api-client.js";
import {UsageError} from "./failures.js";
import {jsonText, type Output} from "./output.js";

/** The name this CLI is installed under on the box; devices run the Go `klaxon` (sdk/go/cmd/klaxon). */
export const PROGRAM = "klaxon-admin";

/** One flag of a command, in the form node:util parseArgs takes, plus what --help says about it. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in --help, e.g. "UUID". */
  value?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** What a command gets to run: its parsed arguments, the output, and the API client on demand. */
export interface CommandContext {
  positionals: string[];
  values: OptionValues;
  json: boolean;
  env: Record<string, string | undefined>;
  output: Output;
  /** The gateway's base URL (--url, KLAXON_URL, or the default). */
  baseUrl: string;
  /** The client for API calls; fails with exit code 4 when no key was given. */
  api(): ApiClient;
}

/** A command of the CLI, e.g. `recipients list`. */
export interface Command {
  words: string[];
  summary: string;
  /** Positional arguments as shown in the synopsis, e.g. "<id>". */
  args?: string;
  /** How many positional arguments it takes: [min, max]; max Infinity for free text. */
  arity?: [number, number];
  options?: Record<string, OptionSpec>;
  run(ctx: CommandContext): Promise<void>;
}

export function stringOption(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.values[name];
  return typeof value === "string" ? value : undefined;
}

export function requiredOption(ctx: CommandContext, name: string): string {
  const value = stringOption(ctx, name);
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function integerOption(ctx: CommandContext, name: string): number | undefined {
  const raw = stringOption(ctx, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** A repeatable flag whose values may also be comma-separated: `--scope a --scope b,c`. */
export function listOption(ctx: CommandContext, name: string): string[] | undefined {
  const value = ctx.values[name];
  if (!Array.isArray(value)) return undefined;
  return value
    .flatMap((item) => item.split(","))
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `--data JSON`: fields the flags do not cover, as one JSON object. */
export function jsonObjectOption(ctx: CommandContext, name: string): Record<string, unknown> {
  const raw = stringOption(ctx, name);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new UsageError(`--${name} is not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new UsageError(`--${name} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/** Drops undefined fields, so a body carries only what was given on the command line. */
export function definedFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** Path segment for an id typed by a person: encoded, so "a/b" cannot address another resource. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}

/** Prints the API's JSON with --json, else the human form. */
export function printResult(ctx: CommandContext, body: unknown, human: () => string): void {
  ctx.output.out(ctx.json ? jsonText(body) : human());
}
