import type {Request} from "express";

/** The cookie that carries a dashboard session token. */
export const SESSION_COOKIE = "klaxon_session";

/** The session token a request's Cookie header carries, if any. */
export function sessionTokenOf(request: Pick<Request, "headers">): string | undefined {
  for (const pair of (request.headers.cookie ?? "").split(";")) {
    const separator = pair.indexOf("=");
    if (separator > 0 && pair.slice(0, separator).trim() === SESSION_COOKIE) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

/**
 * httpOnly (no script can read it), SameSite=Strict (no other site's page can send it), Path=/
 * (the pages and /api/v1 both need it), Secure when the page came over https.
 */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie("", 0, secure);
}
