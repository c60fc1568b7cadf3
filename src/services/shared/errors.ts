/** A field-level problem, pointing into the request body with a JSON Pointer. */
export interface FieldError {
  pointer: string;
  detail: string;
}

export type ErrorCode =
  | "malformed_json"
  | "invalid_json"
  | "invalid_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "route_not_found"
  | "method_not_allowed"
  | "conflict"
  | "in_use"
  | "ambiguous_name"
  | "idempotency_in_flight"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unknown_reference"
  | "priority_without_channel"
  | "idempotency_mismatch"
  | "rate_limited"
  | "internal_error"
  | "storage_unavailable"
  | "too_many_connections"
  | "overloaded"
  | "standby"
  | "csrf_token_invalid"
  | "ack_link_invalid"
  | "ack_link_expired";

/**
 * Every failure the gateway reports is one of these; the API's error catalogue alone decides
 * the HTTP status and the problem+json shape, so services never speak HTTP.
 */
export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly extras: {
      errors?: FieldError[];
      retryAfterSeconds?: number;
      headers?: Record<string, string>;
      /** For `in_use`: the open notifications that block a delete (at most 20), as a problem member of that name. */
      blocking_notifications?: string[];
    } = {}
  ) {
    super(detail);
  }
}

export const notFound = (what: string, id: string) => new AppError("not_found", `${what} ${id} does not exist`);
export function describeFieldErrors(errors: FieldError[]): string {
  return errors.map((item) => `${item.pointer || "body"}: ${item.detail}`).join("; ");
}

export const invalid = (errors: FieldError[]) => new AppError("invalid_request", describeFieldErrors(errors), {errors});
/** A recipient, group or schedule that would page some priority on no channel: refused, each priority at its pointer. */
export const priorityWithoutChannel = (errors: FieldError[]) =>
  new AppError("priority_without_channel", describeFieldErrors(errors), {errors});
export const unknownReference = (pointer: string, detail: string) =>
  new AppError("unknown_reference", detail, {errors: [{pointer, detail}]});

/** A merge patch may only touch writable fields; anything else is named back to the client. */
export function refuseReadOnlyFields(patch: Record<string, unknown>, writable: readonly string[]): void {
  const readOnly = Object.keys(patch).filter((field) => !writable.includes(field));
  if (readOnly.length)
    throw invalid(readOnly.map((field) => ({pointer: `/${field}`, detail: `"${field}" cannot be changed`})));
}

/** A list page, or the error for a cursor that names no item (it may have been deleted). */
export function pageOrInvalidCursor<T>(page: T | null, what: string): T {
  if (!page)
    throw invalid([
      {
        pointer: "/cursor",
        detail: `the cursor does not name a ${what} (it may have been deleted); start again without it`
      }
    ]);
  return page;
}
