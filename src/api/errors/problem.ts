import {AppError, invalid, type ErrorCode, type FieldError} from "../../services/shared/errors.js";
import {StorageUnavailableError} from "../../store/journal/journal.js";
import {ERROR_CATALOGUE, problemType} from "./catalogue.js";
import type {IncomingMessage, ServerResponse} from "node:http";
import type {Logger} from "../../lib/logger.js";
import {INTERNATIONAL_PREFIX, NOT_INTERNATIONAL} from "../../lib/phone-number.js";
import {writeJson} from "../http/write-json.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  errors?: FieldError[];
  blocking_notifications?: string[];
}

export interface ProblemAnswer {
  problem: Problem;
  headers: Record<string, string>;
  /** Errors a client did not cause are logged with their cause; client errors are not. */
  unexpected: boolean;
}

interface AjvError {
  instancePath?: string;
  dataPath?: string;
  keyword: string;
  params?: Record<string, unknown>;
  message?: string;
}

const STORAGE_RETRY_SECONDS = 30;
// A file write that found no room (or a read-only disk): the config store's, a backup's.
const NO_ROOM_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

/** Ajv's params hold strings, numbers and lists of them (a `type` list): written as a template literal would. */
function paramText(value: unknown): string {
  return Array.isArray(value) ? value.map(paramText).join(",") : String(value);
}

function ajvDetail(error: AjvError): string {
  const params = error.params ?? {};
  switch (error.keyword) {
    case "required":
      return params.missingProperty === undefined
        ? "a JSON body is required"
        : `"${paramText(params.missingProperty)}" is required`;
    case "additionalProperties":
      return `unknown field "${paramText(params.additionalProperty)}"`;
    case "enum":
      return `must be one of: ${(params.allowedValues as unknown[])
        .filter((value) => value !== null)
        .map(paramText)
        .join(", ")}`;
    case "type":
      return `must be ${params.type === "integer" ? "an integer" : `of type ${paramText(params.type)}`}`;
    case "pattern":
      if (params.pattern === "\\S") return "must not be blank";
      // A phone number's shape is checked in the schema so it is reported with the other fields; its words are the phone check's.
      if (params.pattern === INTERNATIONAL_PREFIX.source) return NOT_INTERNATIONAL;
      return `does not have the expected form (${paramText(params.pattern)})`;
    case "format":
      return `must be a valid ${paramText(params.format)}`;
    default:
      return error.message ?? `fails the "${error.keyword}" rule`;
  }
}

function ajvPointer(error: AjvError): string {
  const base = error.instancePath ?? (error.dataPath ? error.dataPath.replace(/\./g, "/") : "");
  const params = error.params ?? {};
  if (error.keyword === "required" && params.missingProperty === undefined) return "";
  if (error.keyword === "required" && params.missingProperty) return `${base}/${paramText(params.missingProperty)}`;
  if (error.keyword === "additionalProperties" && params.additionalProperty)
    return `${base}/${paramText(params.additionalProperty)}`;
  return base;
}

/** Ajv errors (from Ts.ED's body validation or a direct validate) as field errors. */
export function fieldErrorsFromAjv(errors: AjvError[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    // A nullable field's failed "null" branch only repeats the real complaint.
    if (error.keyword === "type" && error.params?.type === "null") continue;
    if (error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    const item = {pointer: ajvPointer(error), detail: ajvDetail(error)};
    const key = item.pointer + "\u0000" + item.detail;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

/** A body the schema refused, as the client hears of it. */
export function refusedBody(ajvErrors: AjvError[]): AppError {
  const errors = fieldErrorsFromAjv(ajvErrors);
  return invalid(errors.length ? errors : [{pointer: "", detail: "a JSON body is required"}]);
}

function validationErrors(error: unknown): AjvError[] | null {
  const candidate = error as {name?: string; errors?: AjvError[]; origin?: {errors?: AjvError[]}};
  if (
    !candidate ||
    !["PARAM_VALIDATION_ERROR", "AJV_VALIDATION_ERROR", "VALIDATION_ERROR", "REQUIRED_VALIDATION_ERROR"].includes(
      candidate.name ?? ""
    )
  )
    return null;
  return candidate.origin?.errors ?? candidate.errors ?? [];
}

type Classified = Pick<Problem, "code" | "detail" | "errors" | "blocking_notifications"> & {
  headers?: Record<string, string>;
};

function classify(error: unknown): Classified {
  const ajvErrors = validationErrors(error);
  if (ajvErrors) return classify(refusedBody(ajvErrors));
  if (error instanceof AppError) {
    const headers = {...error.extras.headers};
    if (error.extras.retryAfterSeconds !== undefined) headers["Retry-After"] = String(error.extras.retryAfterSeconds);
    return {
      code: error.code,
      detail: error.message,
      errors: error.extras.errors,
      blocking_notifications: error.extras.blocking_notifications,
      headers
    };
  }
  if (error instanceof StorageUnavailableError) {
    return {
      code: "storage_unavailable",
      detail: "the journal cannot commit right now, so nothing was stored",
      headers: {"Retry-After": String(STORAGE_RETRY_SECONDS)}
    };
  }
  if (NO_ROOM_CODES.has((error as NodeJS.ErrnoException)?.code ?? "")) {
    return {
      code: "storage_unavailable",
      detail: "the disk is full or read-only, so the change was not stored",
      headers: {"Retry-After": String(STORAGE_RETRY_SECONDS)}
    };
  }
  const bodyError = error as {type?: string; status?: number};
  switch (bodyError?.type) {
    case "entity.parse.failed":
      return {code: "malformed_json", detail: "the request body is not valid JSON"};
    case "entity.too.large":
      return {code: "payload_too_large", detail: "the request body is larger than 64 KiB"};
    case "encoding.unsupported":
    case "charset.unsupported":
      return {code: "unsupported_media_type", detail: "the body must be UTF-8 JSON"};
  }
  const status = (error as {status?: number})?.status;
  if (status === 404) return {code: "route_not_found", detail: "no endpoint answers this method and path"};
  if (status === 400) return {code: "invalid_request", detail: (error as Error).message};
  return {code: "internal_error", detail: "the gateway failed to process this request; nothing was stored for it"};
}

/** Turns any thrown value into an RFC 9457 answer. The only place that picks an error's HTTP status. */
export function toProblem(error: unknown, instance: string): ProblemAnswer {
  const {code, detail, errors, blocking_notifications, headers = {}} = classify(error);
  const entry = ERROR_CATALOGUE[code];
  const problem: Problem = {type: problemType(code), title: entry.title, status: entry.status, detail, instance, code};
  if (errors?.length) problem.errors = errors;
  if (blocking_notifications) problem.blocking_notifications = blocking_notifications;
  return {problem, headers, unexpected: entry.status >= 500};
}

/**
 * Answers a failed request with its problem document, logging what the client did not cause.
 * The one writer of problem answers, called by Ts.ED's exception filter (`ProblemFilter`).
 */
export function answerWithProblem(
  {request, response}: {request: Pick<IncomingMessage, "method">; response: ServerResponse},
  instance: string,
  error: unknown,
  logger: Logger
): void {
  const {problem, headers, unexpected} = toProblem(error, instance);
  if (unexpected)
    logger.error("request failed", {
      method: request.method,
      path: problem.instance,
      code: problem.code,
      error: error as Error,
      stack: (error as Error)?.stack
    });
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  writeJson(response, problem.status, problem, "application/problem+json; charset=utf-8");
}
