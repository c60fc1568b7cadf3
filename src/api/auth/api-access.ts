import type {IncomingMessage, ServerResponse} from "node:http";
import {hasScope, type ApiKeysService} from "../../services/keys/api-keys.service.js";
import {AppError} from "../../services/shared/errors.js";
import type {Scope} from "../../domain/vocabulary.js";
import type {Actor} from "../../domain/actor.js";
import type {ApiKeyRecord} from "../../store/config/config-store.js";
import {clientAddress, type Runtime} from "../runtime.js";
import {DASHBOARD_ACTOR, type DashboardAuthService} from "../../dashboard/dashboard-auth.service.js";

const KEY_POLICY = "per-key";

/** Who made a request, as handlers need it: an API key, or the dashboard (which holds every scope). */
export type Principal = Pick<ApiKeyRecord, "id" | "name">;

/** Dashboard sessions share one rate-limit bucket; real key ids are 8 characters, so this never collides. */
const DASHBOARD_PRINCIPAL: Principal = {id: "dashboard", name: "dashboard"};

export interface Access {
  actor: Actor;
  principal: Principal;
}

// Who each admitted request is, kept with the request itself: both ways in hand handlers the same object.
const callers = new WeakMap<IncomingMessage, Access>();

/** Who an admitted request was made by; throws on a route that has no access check (a wiring error). */
export function callerOf(request: IncomingMessage): Access {
  const access = callers.get(request);
  if (!access) throw new Error(`${request.method} ${request.url} was not admitted by an access check`);
  return access;
}

/** The key that made a request, for its log line: undefined before or without an access check. */
export function callerKeyId(request: IncomingMessage): string | undefined {
  return callers.get(request)?.principal.id;
}

/**
 * Checks X-API-Key, then the key's request rate, then its scope. Only a failed attempt meets
 * the client address's failure budget (`Runtime.authenticationFailed`): a valid key is never
 * refused for what other senders behind the same address did. A request
 * without the header may instead carry a dashboard session cookie (admin; state changes need
 * its CSRF token too). On plain node:http types, so the Ts.ED middleware and the lane check a
 * request the same way; the admitted caller is then `callerOf(request)`.
 */
export class ApiAccess {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly runtime: Runtime,
    private readonly dashboard: DashboardAuthService
  ) {}

  check(request: IncomingMessage, response: ServerResponse, scope: Scope): Access {
    const header = request.headers["x-api-key"];
    const presented = header === undefined ? undefined : String(header);
    const session =
      presented === undefined
        ? this.dashboard.sessionFor({headers: request.headers, method: request.method ?? "GET"})
        : null;
    if (session) {
      this.limit(response, DASHBOARD_PRINCIPAL);
      return this.admitted(request, {actor: DASHBOARD_ACTOR, principal: DASHBOARD_PRINCIPAL});
    }
    const record = presented ? this.keys.authenticate(presented) : null;
    if (!record) {
      this.runtime.authenticationFailed(clientAddress(request), presented, response);
      throw new AppError(
        "unauthenticated",
        presented ? "the API key is unknown or revoked" : "the X-API-Key header is missing"
      );
    }
    this.limit(response, record);
    if (!hasScope(record, scope)) throw new AppError("forbidden", `key ${record.id} lacks the scope "${scope}"`);
    return this.admitted(request, {actor: {type: "api_key", id: record.id}, principal: record});
  }

  private admitted(request: IncomingMessage, access: Access): Access {
    callers.set(request, access);
    return access;
  }

  private limit(response: ServerResponse, principal: Principal): void {
    const limiter = this.runtime.keyLimiter;
    const decision = limiter.take(principal.id);
    response.setHeader("RateLimit-Policy", limiter.policyHeader(KEY_POLICY));
    response.setHeader("RateLimit", limiter.rateLimitHeader(KEY_POLICY, decision));
    if (!decision.allowed)
      throw new AppError("rate_limited", `key ${principal.id} is over its rate limit`, {
        retryAfterSeconds: decision.resetSeconds
      });
  }
}
