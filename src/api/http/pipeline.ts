import type {IncomingMessage, ServerResponse} from "node:http";
import express, {type NextFunction, type Request, type Response} from "express";
import {AppError} from "../../services/shared/errors.js";
import type {Logger} from "../../lib/logger.js";
import {callerKeyId} from "../auth/api-access.js";

export const BODY_LIMIT_BYTES = 64 * 1024;
/** How deep a body's arrays and objects may nest: far more than any request needs, far less than a stack overflow. */
export const JSON_DEPTH_LIMIT = 64;
const JSON_TYPES = ["application/json", "application/merge-patch+json", "application/problem+json"];

declare module "node:http" {
  interface IncomingMessage {
    /** The JSON body's bytes as received (idempotency fingerprints, signatures), set by `jsonBody`. */
    rawBody?: Buffer;
  }
}

/** Told how long each answered request took, by its endpoint's template (for the /metrics histogram). */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

// The matched endpoint's template (/api/v1/notifications/:id), never the raw path, so ids and
// scanners' random paths cannot multiply the metric's series.
function routeTemplate(request: Request): string {
  const path = (request as unknown as {route?: {path?: unknown}}).route?.path;
  return typeof path === "string" ? request.baseUrl + path : "unmatched";
}

/** What is logged and measured of each answered request. */
export interface AnsweredRequest {
  method: string;
  path: string;
  /** The endpoint's template, or "unmatched". */
  route: string;
  status: number;
  ms: number;
  keyId: string | undefined;
  requestId: unknown;
}

/** One structured line per request, with the key that made it (never the key itself), and its metric. */
export function requestRecorder(logger: Logger, observe?: RequestObserver) {
  return (answered: AnsweredRequest) => {
    observe?.(answered.method, answered.route, answered.status, answered.ms / 1000);
    const level = answered.status >= 500 ? "warn" : "debug";
    logger[level]("http", {
      method: answered.method,
      path: answered.path,
      status: answered.status,
      ms: Math.round(answered.ms * 10) / 10,
      key_id: answered.keyId,
      request_id: answered.requestId
    });
  };
}

export type RequestRecorder = ReturnType<typeof requestRecorder>;

/** Milliseconds since a `process.hrtime.bigint()` reading. */
function msSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Records every request that goes through Express. */
export function requestLog(record: RequestRecorder) {
  return (request: Request, response: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    // Naming the framework only helps an attacker pick exploits.
    response.removeHeader("X-Powered-By");
    response.on("finish", () => {
      // The same id the client sees in X-Request-Id (set by Ts.ED), so a log line can be matched to an answer.
      record({
        method: request.method,
        path: request.path,
        route: routeTemplate(request),
        status: response.statusCode,
        ms: msSince(started),
        keyId: callerKeyId(request),
        requestId: response.getHeader("x-request-id")
      });
    });
    next();
  };
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

// Keyless ping URLs take whatever a device's tool sends (curl -d, a PLC's form post) and ignore it, as healthchecks.io does.
const ANY_BODY_PATHS = /^\/ping\//;

type BodyStep = (request: IncomingMessage, response: ServerResponse, next: (error?: Error) => void) => void;

/** A body must be JSON; checked before parsing so the client hears 415, not a confusing 400. */
export const requireJsonBody: BodyStep = (request, _response, next) => {
  const method = request.method ?? "GET";
  if (!["POST", "PUT", "PATCH"].includes(method) || !hasBody(request) || ANY_BODY_PATHS.test(request.url ?? ""))
    return next();
  const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (!JSON_TYPES.includes(type)) {
    return next(
      new AppError(
        "unsupported_media_type",
        `the body must be application/json${method === "PATCH" ? " or application/merge-patch+json" : ""}, not ${type || "untyped"}`
      )
    );
  }
  next();
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * Whether UTF-8 JSON text nests arrays and objects deeper than `limit`, read without parsing it:
 * the parse and the framework's recursive copies of the result would overflow the stack on a
 * 40 KB body nested 10,000 deep. Only strings need tracking, as brackets inside them do not
 * nest; every structural character is ASCII, so no multi-byte sequence can be mistaken for one.
 */
function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at];
    if (inString) {
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (OPENERS.has(byte)) {
      if (++depth > limit) return true;
    } else if (CLOSERS.has(byte)) depth--;
  }
  return false;
}

// body-parser takes any "utf-*" charset its decoder knows; ours must know it too to read the depth.
function utf8(buffer: Buffer, encoding: string): Uint8Array {
  if (encoding === "utf-8") return buffer;
  try {
    return Buffer.from(new TextDecoder(encoding).decode(buffer));
  } catch {
    throw new AppError("unsupported_media_type", "the body must be UTF-8 JSON");
  }
}

/**
 * JSON bodies up to 64 KiB and 64 levels deep, keeping the raw bytes for idempotency fingerprints
 * and signatures. body-parser calls `verify` with the bytes before it parses them, so a body
 * nested too deep is refused before any parser or framework code has seen it.
 */
const jsonBody: BodyStep = express.json({
  limit: BODY_LIMIT_BYTES,
  type: JSON_TYPES,
  strict: false,
  verify: (request, _response, buffer, encoding) => {
    if (nestsDeeperThan(utf8(buffer, encoding), JSON_DEPTH_LIMIT))
      throw new AppError(
        "invalid_json",
        `the request body nests arrays and objects more than ${JSON_DEPTH_LIMIT} levels deep`
      );
    request.rawBody = buffer;
  }
});

/**
 * How every request's body is read: Express runs these steps as application middlewares, ahead of
 * every route. body-parser (express.json) does the
 * reading, the limit, the charset, BOM stripping and the parse, and names its failures
 * (`entity.parse.failed`, `entity.too.large`), which the problem catalogue words.
 */
export const BODY_PIPELINE: BodyStep[] = [requireJsonBody, jsonBody];
