// The one way pages talk to the gateway: /api/v1 and /dashboard/api with the session cookie.
// State-changing requests carry the session's CSRF token; errors arrive as RFC 9457 problems.

const SAFE_METHODS = new Set(["GET", "HEAD"]);
let csrfToken = null;
let signedOutHandler = () => undefined;

export function setCsrfToken(token) {
  csrfToken = token;
}

/** Called when the gateway says the session is gone (expired, signed out elsewhere, restarted). */
export function onSignedOut(handler) {
  signedOutHandler = handler;
}

export function signedOut() {
  signedOutHandler();
}

/** A refused request: `problem` is the gateway's problem+json (title, detail, code, errors). */
export class ApiError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.problem = problem;
    this.status = status;
  }
}

const UNREACHABLE = {
  title: "The gateway did not answer",
  detail: "Check the network connection to the Klaxon box, then try again.",
  code: "unreachable"
};

export async function api(method, path, body) {
  const headers = {Accept: "application/json, application/problem+json"};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (!SAFE_METHODS.has(method) && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body)
    });
  } catch {
    throw new ApiError(UNREACHABLE, 0);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = {title: `Unexpected answer (HTTP ${response.status})`, detail: text.slice(0, 200)};
  }
  if (response.ok) return data;
  const error = new ApiError(data ?? {title: `HTTP ${response.status}`}, response.status);
  if (
    response.status === 401 &&
    !path.startsWith("/dashboard/api/sign-in") &&
    !path.startsWith("/dashboard/api/password")
  )
    signedOut();
  throw error;
}

/** Like api(), but an endpoint this gateway does not have yet answers null instead of failing. */
export async function apiIfAvailable(method, path, body) {
  try {
    return await api(method, path, body);
  } catch (error) {
    if (error instanceof ApiError && error.problem.code === "route_not_found") return null;
    throw error;
  }
}

/**
 * Like apiIfAvailable(), and null as well when the signed-in user's role may not read it: for what
 * a page only names (the audit log's keys, a maintenance window's integrations), never for what it
 * is about, whose refusal the page must show in words.
 */
export async function apiIfAllowed(method, path) {
  try {
    return await apiIfAvailable(method, path);
  } catch (error) {
    if (error instanceof ApiError && error.problem.code === "forbidden") return null;
    throw error;
  }
}

/** Every page of a cursor-paginated list (recipients and groups are small). */
export async function listAll(path) {
  const items = [];
  let cursor = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const page = await api(
      "GET",
      `${path}${separator}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`
    );
    items.push(...page.items);
    cursor = page.next_cursor ?? null;
  } while (cursor);
  return items;
}
