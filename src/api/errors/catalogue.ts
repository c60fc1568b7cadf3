import type {ErrorCode} from "../../services/shared/errors.js";

export interface CatalogueEntry {
  status: number;
  title: string;
  /** What a client should do about it: shown at the problem type's URI. */
  advice: string;
}

/** The one table from error code to HTTP status. Type URIs are `/problems/<code>`, served by the gateway. */
export const ERROR_CATALOGUE: Record<ErrorCode, CatalogueEntry> = {
  malformed_json: {status: 400, title: "Malformed JSON", advice: "Send a syntactically valid JSON document."},
  invalid_json: {
    status: 400,
    title: "Unreadable JSON",
    advice: "Send JSON whose arrays and objects nest at most 64 levels deep; no request needs more."
  },
  invalid_request: {
    status: 400,
    title: "Invalid request",
    advice: "Correct the fields named in `errors` (JSON Pointers into the body or query)."
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    advice: "Send a valid, unrevoked API key in the X-API-Key header or as Authorization: Bearer <key>."
  },
  forbidden: {status: 403, title: "Missing permission", advice: "Use a key that has the scope named in `detail`."},
  not_found: {status: 404, title: "Not found", advice: "Check the identifier; it may have been deleted."},
  route_not_found: {
    status: 404,
    title: "No such endpoint",
    advice: "Check the method and path against /api/v1/openapi.json."
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    advice: "Use one of the methods the Allow header lists for this path."
  },
  conflict: {
    status: 409,
    title: "State conflict",
    advice: "The resource's current state does not allow this change; read it and decide again."
  },
  in_use: {status: 409, title: "Resource in use", advice: "Remove the references named in `detail` first."},
  ambiguous_name: {
    status: 409,
    title: "Ambiguous name",
    advice: "Several targets have this name: give the uuid of the one you mean, as listed in `detail`."
  },
  idempotency_in_flight: {
    status: 409,
    title: "Request still in progress",
    advice: "A request with this Idempotency-Key is still being processed; retry after it finishes."
  },
  payload_too_large: {status: 413, title: "Body too large", advice: "Keep request bodies under 64 KiB."},
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    advice: "Send the body as application/json (PATCH also takes application/merge-patch+json)."
  },
  unknown_reference: {
    status: 422,
    title: "Unknown reference",
    advice: "A referenced recipient, group or other resource does not exist."
  },
  priority_without_channel: {
    status: 422,
    title: "Priority without a channel",
    advice:
      "An alert of the priority named in `errors` would page nobody: give the recipient a contact its channel_order and routing rules allow for it."
  },
  idempotency_mismatch: {
    status: 422,
    title: "Idempotency-Key reused",
    advice: "This Idempotency-Key was used with a different body; use a new key for a new request."
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    advice: "Wait for Retry-After seconds; the RateLimit headers show the remaining quota."
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    advice: "Retry with the same Idempotency-Key; report it if it persists."
  },
  storage_unavailable: {
    status: 503,
    title: "Storage unavailable",
    advice:
      "The journal or the config store cannot be written (for example the disk is full); nothing was stored. Retry after Retry-After seconds."
  },
  too_many_connections: {
    status: 503,
    title: "Too many connections",
    advice:
      "The gateway (or your address) holds the most connections it allows; close idle connections and retry after Retry-After seconds. The connection is closed."
  },
  overloaded: {
    status: 503,
    title: "Overloaded",
    advice:
      "The gateway is working on the most requests it holds at once (http.max_requests_in_flight); nothing of this request was done or stored. Send it again after Retry-After seconds."
  },
  standby: {
    status: 503,
    title: "Standby box",
    advice:
      'This box is the standby of a pair and serves nothing until it takes over: send to the active box (the Link header with rel="active"), or retry after Retry-After seconds.'
  },
  csrf_token_invalid: {
    status: 403,
    title: "CSRF token missing or wrong",
    advice: "A dashboard session changes state only with its X-CSRF-Token header; reload the dashboard to get it."
  },
  ack_link_invalid: {
    status: 403,
    title: "Invalid acknowledge link",
    advice:
      "Open the link exactly as the email has it; if it still fails, acknowledge in the dashboard or with `klaxon ack <id>`."
  },
  ack_link_expired: {
    status: 410,
    title: "Acknowledge link expired",
    advice: "Links work for smtp.ack_link_days; acknowledge in the dashboard or with `klaxon ack <id>`."
  }
};

export function problemType(code: ErrorCode): string {
  return `/problems/${code}`;
}
