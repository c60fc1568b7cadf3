import type {TestGateway} from "../../support/gateway.js";

export const ADMIN_PASSWORD = "correct horse battery";
/** The first admin's name when the set-password request names nobody (as the helpers below). */
export const ADMIN_NAME = "admin";

/** A browser-less dashboard client: sets the password, signs in, and sends the cookie (and CSRF token) like the page does. */
export interface DashboardClient {
  cookie: string;
  csrfToken: string;
  call<T = any>(
    method: string,
    path: string,
    options?: {body?: unknown; csrf?: string | null}
  ): Promise<{status: number; headers: Headers; body: T}>;
}

export async function setAdminPassword(gw: TestGateway, password = ADMIN_PASSWORD, adminKey = gw.adminKey) {
  return gw.call("POST", "/dashboard/api/password", {key: null, body: {admin_key: adminKey, password}});
}

export function cookieOf(headers: Headers): string {
  return (headers.get("set-cookie") ?? "").split(";")[0];
}

/** Signs in as `name` (absent: the request names nobody, which means "admin"). */
export async function signIn(gw: TestGateway, password = ADMIN_PASSWORD, name?: string): Promise<DashboardClient> {
  const answer = await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {name, password}});
  if (answer.status !== 200) throw new Error(`sign-in failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  const client: DashboardClient = {
    cookie: cookieOf(answer.headers),
    csrfToken: answer.body.csrf_token,
    call(method, path, options = {}) {
      const headers: Record<string, string> = {Cookie: client.cookie};
      const csrf = options.csrf === undefined ? client.csrfToken : options.csrf;
      if (csrf !== null) headers["X-CSRF-Token"] = csrf;
      return gw.call(method, path, {key: null, body: options.body, headers});
    }
  };
  return client;
}
