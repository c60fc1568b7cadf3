import {invalid} from "../../services/shared/errors.js";

/** Query strings are parsed here, not coerced by the framework, so every mistake gets a precise error. */
export function parseLimit(raw: string | undefined, fallback = 50, max = 200): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > max)
    throw invalid([{pointer: "/limit", detail: `must be an integer from 1 to ${max}`}]);
  return value;
}

export function parseChoice<T extends string>(
  name: string,
  raw: string | undefined,
  choices: readonly T[]
): T | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!choices.includes(raw as T))
    throw invalid([{pointer: `/${name}`, detail: `must be one of: ${choices.join(", ")}`}]);
  return raw as T;
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw invalid([{pointer: "", detail: "the body must be a JSON object"}]);
  return body as Record<string, unknown>;
}

/** An ISO 8601 date-time with its zone (Z or an offset) in the query, as epoch ms; absent gives `fallback`. */
export function parseInstant(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) || !Number.isFinite(value))
    throw invalid([
      {pointer: `/${name}`, detail: "must be an ISO 8601 date-time with a zone, e.g. 2026-03-29T06:00:00Z"}
    ]);
  return value;
}
