import {Middleware, UseAuth, type MiddlewareMethods} from "@tsed/platform-middlewares";
import {Context} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {useDecorators} from "@tsed/core";
import {inject} from "@tsed/di";
import {Returns, Security} from "@tsed/schema";
import {ApiKeysService, hasScope} from "../../services/api-keys.service.js";
import {AppError} from "../../services/errors.js";
import type {Scope} from "../../domain/vocabulary.js";
import type {Actor} from "../../store/journal/audit.repository.js";
import type {ApiKeyRecord} from "../../store/config/config-store.js";
import {ProblemModel} from "../models/problem.model.js";
import {Runtime} from "../runtime.js";
import {DASHBOARD_ACTOR, DashboardAuthService} from "../../dashboard/dashboard-auth.service.js";

const KEY_POLICY = "per-key";

/** Who made a request, as handlers need it: an API key, or the dashboard (which holds every scope). */
export type Principal = Pick<ApiKeyRecord, "id" | "name">;

/** Dashboard sessions share one rate-limit bucket; real key ids are 8 characters, so this never collides. */
const DASHBOARD_PRINCIPAL: Principal = {id: "dashboard", name: "dashboard"};

/**
 * Checks X-API-Key, then the key's request rate, then its scope. Failed attempts count against
 * the client address, so guessing keys is throttled long before it could succeed. A request
 * without the header may instead carry a dashboard session cookie (admin; state changes need
 * its CSRF token too).
 */
@Middleware()
export class ApiKeyAuthMiddleware implements MiddlewareMethods {
  private readonly keys = inject(ApiKeysService);
  private readonly runtime = inject(Runtime);
  private readonly dashboard = inject(DashboardAuthService);

  use(@Context() ctx: PlatformContext): void {
    const {scope} = ctx.endpoint.get(ApiKeyAuthMiddleware) as {scope: Scope};
    const request = ctx.request.raw;
    const address = this.runtime.admitAddress(request);
    const presented = request.get("x-api-key");
    const session = presented === undefined ? this.dashboard.sessionFor(request) : null;
    if (session) {
      this.limit(ctx, DASHBOARD_PRINCIPAL);
      return this.admit(ctx, DASHBOARD_ACTOR, DASHBOARD_PRINCIPAL);
    }
    const record = presented ? this.keys.authenticate(presented) : null;
    if (!record) {
      this.runtime.authenticationFailed(address);
      throw new AppError("unauthenticated", presented ? "the API key is unknown or revoked" : "the X-API-Key header is missing");
    }
    this.limit(ctx, record);
    if (!hasScope(record, scope)) throw new AppError("forbidden", `key ${record.id} lacks the scope "${scope}"`);
    this.admit(ctx, {type: "api_key", id: record.id}, record);
  }

  private limit(ctx: PlatformContext, principal: Principal): void {
    const limiter = this.runtime.keyLimiter;
    const decision = limiter.take(principal.id);
    const response = ctx.response.raw;
    response.setHeader("RateLimit-Policy", limiter.policyHeader(KEY_POLICY));
    response.setHeader("RateLimit", limiter.rateLimitHeader(KEY_POLICY, decision));
    if (!decision.allowed) throw new AppError("rate_limited", `key ${principal.id} is over its rate limit`, {retryAfterSeconds: decision.resetSeconds});
  }

  private admit(ctx: PlatformContext, actor: Actor, principal: Principal): void {
    ctx.set("actor", actor);
    ctx.set("apiKey", principal);
  }
}

/** Requires an API key with `scope` (admin keys hold every scope), and documents the answers. */
export function Authorize(scope: Scope) {
  return useDecorators(
    UseAuth(ApiKeyAuthMiddleware, {scope}),
    Security("api_key"),
    Returns(401, ProblemModel).Description("Missing, unknown or revoked API key"),
    Returns(403, ProblemModel).Description(`The key lacks the scope ${scope}`),
    Returns(429, ProblemModel).Description("Rate limit exceeded; see Retry-After"),
    Returns(500, ProblemModel).Description("Internal error; retry with the same Idempotency-Key")
  );
}

export function actorOf(ctx: PlatformContext): Actor {
  return ctx.get("actor") as Actor;
}

export function apiKeyOf(ctx: PlatformContext): Principal {
  return ctx.get("apiKey") as Principal;
}
