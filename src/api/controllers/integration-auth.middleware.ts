import {AuthOptions, Middleware, UseAuth, type MiddlewareMethods} from "@tsed/platform-middlewares";
import {Context} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {combineMethodDecorators, expressRequest, expressResponse} from "../typed-tsed.js";
import {inject} from "@tsed/di";
import {Returns, Security} from "@tsed/schema";
import {AppError} from "../../services/shared/errors.js";
import {IntegrationCredentials} from "../../services/integrations/integration-credentials.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import {ApiKeyAuthMiddleware} from "../auth/authorize.js";
import {ProblemModel} from "../models/problem.model.js";
import {Runtime} from "../runtime.js";

// The scope a key needs to send events: the same as sending an alert directly.
const EVENT_SCOPE = "notifications:send";
const RATE_POLICY = "per-integration";

/**
 * An integration's events are accepted with any one of three credentials: an API key (checked
 * exactly as everywhere else), a Standard Webhooks signature made with the integration's
 * secret, or the token of the integration's keyless URL. A failed signature or token counts
 * against the client address like a failed key, so neither can be guessed.
 */
@Middleware()
export class IntegrationAuthMiddleware implements MiddlewareMethods {
  private readonly keyAuth = inject(ApiKeyAuthMiddleware);
  private readonly credentials = inject(IntegrationCredentials);
  private readonly runtime = inject(Runtime);

  use(@Context() ctx: PlatformContext): void {
    const request = expressRequest(ctx);
    if (request.get("x-api-key") !== undefined) return this.keyAuth.use(ctx);
    const address = this.runtime.admitAddress(request, expressResponse(ctx));
    let integration: IntegrationRecord;
    try {
      integration = this.authenticate(ctx);
    } catch (error) {
      this.runtime.authenticationFailed(address, expressResponse(ctx));
      throw error;
    }
    this.limit(ctx, integration);
    ctx.set("integration", integration);
  }

  // A signature or URL token stands for the integration as a key stands for its holder: same budget, same headers.
  private limit(ctx: PlatformContext, integration: IntegrationRecord): void {
    const limiter = this.runtime.keyLimiter;
    const decision = limiter.take(`integration:${integration.id}`);
    const response = expressResponse(ctx);
    response.setHeader("RateLimit-Policy", limiter.policyHeader(RATE_POLICY));
    response.setHeader("RateLimit", limiter.rateLimitHeader(RATE_POLICY, decision));
    if (!decision.allowed) throw new AppError("rate_limited", `integration ${integration.id} is over its rate limit`, {retryAfterSeconds: decision.resetSeconds});
  }

  private authenticate(ctx: PlatformContext): IntegrationRecord {
    const request = expressRequest(ctx);
    const id = String(request.params.id ?? "");
    const signature = request.get("webhook-signature") ?? request.get("x-service-signature");
    if (signature !== undefined || request.get("webhook-id") !== undefined) {
      const integration = this.credentials.authenticateSigned(id, {id: request.get("webhook-id"), timestamp: request.get("webhook-timestamp"), signature}, request.rawBody ?? Buffer.alloc(0));
      ctx.set("webhook-id", request.get("webhook-id"));
      return integration;
    }
    const token = request.query.token;
    if (typeof token === "string" && token !== "") return this.credentials.authenticateToken(id, token);
    throw new AppError("unauthenticated", "send an X-API-Key, sign the event with the integration's secret, or use the integration's url");
  }
}

/** The integration a request was authenticated as by signature or token; null when a key was used. */
export function integrationOf(ctx: PlatformContext): IntegrationRecord | null {
  return ctx.get<IntegrationRecord | undefined>("integration") ?? null;
}

/** The webhook-id of an event authenticated by its signature: the same id on every retry of one event. */
export function signedEventId(ctx: PlatformContext): string | null {
  return ctx.get<string | undefined>("webhook-id") ?? null;
}

/** Key, signature or URL token, documented like every other authenticated endpoint. */
export function AuthorizeIntegrationEvent() {
  return combineMethodDecorators(
    AuthOptions(ApiKeyAuthMiddleware, {scope: EVENT_SCOPE}),
    UseAuth(IntegrationAuthMiddleware),
    Security("api_key"),
    Returns(401, ProblemModel).Description("No valid credential: an unknown or revoked key, a bad signature, a timestamp outside the 5-minute window, or a wrong token"),
    Returns(403, ProblemModel).Description(`The key lacks the scope ${EVENT_SCOPE}`),
    Returns(429, ProblemModel).Description("Rate limit exceeded; see Retry-After"),
    Returns(500, ProblemModel).Description("Internal error")
  );
}
