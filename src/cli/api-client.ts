import {retryAfterMs} from "../lib/retry-policy.js";
import {apiFailure, CliError, EXIT, type Problem} from "./failures.js";

/**
 * Which failures a request may be repeated after.
 * - `idempotent`: repeating cannot change the outcome (reads, sends carrying an Idempotency-Key,
 *   ack, resolve, merge patches, deletes, heartbeat pings): retried on network errors, 429 and 5xx.
 * - `create`: a repeat after an unknown outcome could create a duplicate, so only failures that
 *   prove nothing was stored are retried: connection refused, 429, and 503 (the journal did not commit).
 */
export type RetryPolicy = "idempotent" | "create";

export interface ApiRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  retry: RetryPolicy;
}

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string | null;
  /** Repeats after the first attempt. */
  retries: number;
  timeoutMs: number;
  /** Told about each retry (the CLI prints it on stderr). */
  onRetry?: (note: string) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
// A gateway asking for a longer pause than this is overloaded or out of disk: report it instead of hanging a script.
const MAX_RETRY_AFTER_MS = 60_000;

/** Exponential backoff from 0.5 s, capped at 8 s, with ±20% jitter so many clients do not retry in step. */
function backoffMs(retry: number, random: () => number): number {
  const base = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (retry - 1));
  return Math.round(base * (0.8 + random() * 0.4));
}

type Outcome<T> = {answer: ApiAnswer<T>} | {failure: CliError; retryable: boolean; waitMs: number | null};

/** A small client for the gateway's API with the retry rules of docs/clients.md. */
export class ApiClient {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly options: ApiClientOptions) {
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  async request<T = unknown>(request: ApiRequest): Promise<ApiAnswer<T>> {
    const attempts = 1 + Math.max(0, this.options.retries);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt<T>(request);
      if ("answer" in outcome) return outcome.answer;
      if (!outcome.retryable || attempt >= attempts) throw outcome.failure;
      if (outcome.waitMs !== null && outcome.waitMs > MAX_RETRY_AFTER_MS) {
        throw new CliError(
          `${outcome.failure.message} (the gateway asks to retry after ${Math.ceil(outcome.waitMs / 1000)} s)`,
          EXIT.unavailable,
          outcome.failure.problem
        );
      }
      const waitMs = Math.max(backoffMs(attempt, this.random), outcome.waitMs ?? 0);
      this.options.onRetry?.(
        `retrying in ${(waitMs / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${attempts}): ${outcome.failure.message.split("\n")[0]}`
      );
      await this.sleep(waitMs);
    }
  }

  private url(request: ApiRequest): string {
    const url = new URL(request.path, this.options.baseUrl.replace(/\/?$/, "/"));
    for (const [name, value] of Object.entries(request.query ?? {}))
      if (value !== undefined && value !== "") url.searchParams.set(name, value);
    return url.toString();
  }

  private async attempt<T>(request: ApiRequest): Promise<Outcome<T>> {
    const headers: Record<string, string> = {Accept: "application/json, application/problem+json", ...request.headers};
    if (this.options.apiKey) headers["X-API-Key"] = this.options.apiKey;
    if (request.body !== undefined) headers["Content-Type"] ??= "application/json";
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.url(request), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: "error"
      });
      text = await response.text();
    } catch (error) {
      const reason = networkReason(error);
      const refused = reason.includes("ECONNREFUSED");
      return {
        failure: new CliError(`cannot reach the gateway at ${this.options.baseUrl}: ${reason}`, EXIT.unavailable),
        retryable: request.retry === "idempotent" || refused,
        waitMs: null
      };
    }
    const body = parseJson(text);
    if (response.ok) return {answer: {status: response.status, headers: response.headers, body: body as T}};
    const problem = asProblem(body, response);
    const retryable =
      response.status === 429 ||
      response.status === 503 ||
      (response.status >= 500 && request.retry === "idempotent") ||
      // The same Idempotency-Key is still being committed by an earlier attempt: its answer will be replayed.
      problem.code === "idempotency_in_flight";
    return {
      failure: apiFailure(problem),
      retryable,
      waitMs: retryAfterMs(response.headers.get("retry-after"), Date.now())
    };
  }
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The gateway answers problem+json; a proxy in between may not, so anything else becomes a minimal problem. */
function asProblem(body: unknown, response: Response): Problem {
  if (body && typeof body === "object" && typeof (body as Problem).title === "string")
    return {...(body as Problem), status: response.status};
  return {title: response.statusText || "HTTP error", status: response.status};
}

function networkReason(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "no answer within the timeout";
  // fetch reports "fetch failed"; the reason (ECONNREFUSED, ECONNRESET, a DNS failure) is in its cause.
  const cause = (error as {cause?: {code?: string; message?: string}}).cause;
  if (cause?.code)
    return cause.message?.includes(cause.code) ? cause.message : `${cause.code} ${cause.message ?? ""}`.trim();
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
