import {Middleware, UseAuth, type MiddlewareMethods} from "@tsed/platform-middlewares";
import {Context} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {combineMethodDecorators, expressRequest, expressResponse} from "../typed-tsed.js";
import {inject} from "@tsed/di";
import {Returns, Security} from "@tsed/schema";
import {ApiKeysService} from "../../services/keys/api-keys.service.js";
import type {Scope} from "../../domain/vocabulary.js";
import type {RoleGrant} from "../../domain/roles.js";
import type {Actor} from "../../domain/actor.js";
import {ProblemModel} from "../models/problem.model.js";
import {Runtime} from "../runtime.js";
import {DashboardAuthService} from "../../dashboard/dashboard-auth.service.js";
import {ApiAccess, callerOf, type Principal} from "./api-access.js";

/** The routes' access check (`ApiAccess`), with the scope `Authorize` declared: on success the caller is `callerOf(request)`. */
@Middleware()
export class ApiKeyAuthMiddleware implements MiddlewareMethods {
  private readonly access = new ApiAccess(inject(ApiKeysService), inject(Runtime), inject(DashboardAuthService));

  use(@Context() ctx: PlatformContext): void {
    const {scope, grant} = ctx.endpoint.get<{scope: Scope; grant?: RoleGrant}>(ApiKeyAuthMiddleware);
    this.access.check(expressRequest(ctx), expressResponse(ctx), scope, grant);
  }
}

/**
 * Requires an API key with `scope` (admin keys hold every scope), or a dashboard user whose role
 * allows it (`grant` opens an admin or write route to lesser roles: domain/roles.ts), and
 * documents the answers.
 */
export function Authorize(scope: Scope, grant?: RoleGrant) {
  return combineMethodDecorators(
    UseAuth(ApiKeyAuthMiddleware, {scope, grant}),
    Security("api_key"),
    Returns(401, ProblemModel).Description("Missing, unknown or revoked API key"),
    Returns(403, ProblemModel).Description(
      `The key lacks the scope ${scope}, or the dashboard user's role may not do this`
    ),
    Returns(429, ProblemModel).Description("Rate limit exceeded; see Retry-After"),
    Returns(500, ProblemModel).Description("Internal error; retry with the same Idempotency-Key")
  );
}

export function actorOf(ctx: PlatformContext): Actor {
  return callerOf(expressRequest(ctx)).actor;
}

export function apiKeyOf(ctx: PlatformContext): Principal {
  return callerOf(expressRequest(ctx)).principal;
}
