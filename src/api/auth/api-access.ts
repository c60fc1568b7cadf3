import type {IncomingHttpHeaders, IncomingMessage, ServerResponse} from "node:http";
import {hasScope, type ApiKeysService} from "../../services/keys/api-keys.service.js";
import {AppError} from "../../services/shared/errors.js";
import type {Scope} from "../../domain/vocabulary.js";
import type {Actor} from "../../domain/actor.js";
import type {ApiKeyRecord} from "../../store/config/config-store.js";
import {clientAddress, type Runtime} from "../runtime.js";
import {dashboardActor, type DashboardAuthService} from "../../dashboard/dashboard-auth.service.js";
import {refusalFor, roleAllows, type RoleGrant} from "../../domain/roles.js";

const KEY_POLICY = "per-key";

/**
 * Who made a request, as handlers need it: an API key, or a dashboard user (its rate-limit bucket
 * is `dashboard <user id>`, which no 8-character key id can be; its name is the person's).
 */
export type Principal = Pick<ApiKeyRecord, "id" | "name">;

export interface Access {
  actor: Actor;
  principal: Principal;
}

// Who each admitted request is, kept with the request itself: the route reads it, and so does the
// request log once the answer is written (after Ts.ED's context is gone).
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

/** What a request presents as its API key: the key, or words for a header that cannot be one. */
export type PresentedKey = {key: string} | {malformed: string; credential: string};

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The API key a request presents, in `X-API-Key` or, as Grafana, Node-RED and most HTTP tools send
 * it, `Authorization: Bearer <key>` (RFC 6750); null when it sends neither. Both headers are one
 * credential: sent together they must carry the same key.
 */
export function presentedKey(headers: IncomingHttpHeaders): PresentedKey | null {
  const header = headers["x-api-key"];
  const apiKey = header === undefined ? undefined : String(header);
  const authorization = headers.authorization;
  if (authorization === undefined) return apiKey === undefined ? null : {key: apiKey};
  const bearer = BEARER.exec(authorization)?.[1];
  if (bearer === undefined)
    return {
      malformed: 'the Authorization header must be "Bearer <API key>" (or send the key in X-API-Key)',
      credential: authorization
    };
  if (apiKey !== undefined && apiKey !== bearer)
    return {malformed: "X-API-Key and Authorization carry different keys: send one", credential: bearer};
  return {key: bearer};
}

function refusal(presented: PresentedKey | null): string {
  if (presented === null) return "no API key: send it in the X-API-Key header or as Authorization: Bearer <key>";
  return "malformed" in presented ? presented.malformed : "the API key is unknown or revoked";
}

/**
 * Checks the API key (`presentedKey`: X-API-Key or a Bearer token), then the key's request rate,
 * then its scope. Only a failed attempt meets the client address's failure budget
 * (`Runtime.authenticationFailed`), whichever header carried it: a valid key is never refused for
 * what other senders behind the same address did. A request without a key may instead carry a
 * dashboard session cookie (state changes need its CSRF token too): its user's role must allow
 * the route (`roleAllows`), or the answer is a 403 that says what the role may do. Run by the routes' Ts.ED middlewares (`Authorize`) and by /readyz for its
 * details; the admitted caller is then `callerOf(request)`.
 */
export class ApiAccess {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly runtime: Runtime,
    private readonly dashboard: DashboardAuthService
  ) {}

  check(request: IncomingMessage, response: ServerResponse, scope: Scope, grant?: RoleGrant): Access {
    const presented = presentedKey(request.headers);
    const session =
      presented === null
        ? this.dashboard.sessionFor({headers: request.headers, method: request.method ?? "GET"})
        : null;
    if (session) {
      const {user} = session;
      const principal = {id: `dashboard ${user.id}`, name: this.dashboard.users.personOf(user)};
      this.limit(response, principal);
      if (!roleAllows(user.role, scope, grant)) throw new AppError("forbidden", refusalFor(user.name, user.role));
      return this.admitted(request, {actor: dashboardActor(user), principal});
    }
    const record = presented && "key" in presented && presented.key ? this.keys.authenticate(presented.key) : null;
    if (!record) {
      const credential = presented && ("key" in presented ? presented.key : presented.credential);
      this.runtime.authenticationFailed(clientAddress(request), credential ?? undefined, response);
      throw new AppError("unauthenticated", refusal(presented));
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
