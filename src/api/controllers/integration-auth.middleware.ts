import type {IncomingMessage, ServerResponse} from "node:http";
import type {Request} from "express";
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
import {presentedKey} from "../auth/api-access.js";
import {ProblemModel} from "../models/problem.model.js";
import {clientAddress, Runtime} from "../runtime.js";

// The scope a key needs to send events: the same as sending an alert directly.
const EVENT_SCOPE = "notifications:send";
const RATE_POLICY = "per-integration";

/** What an event's credential said: the integration it stands for and, if signed, the event's webhook-id. */
export interface IntegrationCaller {
  integration: IntegrationRecord;
  /** The webhook-id of a signed event: the same id on every retry of one event. */
  eventId: string | null;
}

// Kept with the request, as `callerOf` keeps a key's caller: the route reads it, and nothing outlives the request.
const integrationCallers = new WeakMap<IncomingMessage, IntegrationCaller>();

/** The integration a request was authenticated as by signature or token; null when a key was used. */
export function integrationCallerOf(request: IncomingMessage): IntegrationCaller | null {
  return integrationCallers.get(request) ?? null;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** What a failed event presented as its credential: its signature, else its URL token, else nothing. */
function presentedCredential(request: Request): string | undefined {
  const token = request.query.token;
  return signatureOf(request) ?? (typeof token === "string" ? token : undefined);
}

function signatureOf(request: IncomingMessage): string | undefined {
  return header(request, "webhook-signature") ?? header(request, "x-service-signature");
}

/**
 * An integration's events are accepted with any one of three credentials: an API key (checked
 * exactly as everywhere else), a Standard Webhooks signature made with the integration's
 * secret, or the token of the integration's keyless URL. A failed signature or token counts
 * against the client address like a failed key; a valid one passes whatever others did from there.
 */
@Middleware()
export class IntegrationAuthMiddleware implements MiddlewareMethods {
  private readonly keyAuth = inject(ApiKeyAuthMiddleware);
  private readonly integrations = inject(IntegrationCredentials);
  private readonly runtime = inject(Runtime);

  use(@Context() ctx: PlatformContext): void {
    const request = expressRequest(ctx);
    const response = expressResponse(ctx);
    if (presentedKey(request.headers) !== null) return this.keyAuth.use(ctx);
    let caller: IntegrationCaller;
    try {
      caller = this.authenticate(request);
    } catch (error) {
      this.runtime.authenticationFailed(clientAddress(request), presentedCredential(request), response);
      throw error;
    }
    this.limit(response, caller.integration);
    integrationCallers.set(request, caller);
  }

  // A signature or URL token stands for the integration as a key stands for its holder: same budget, same headers.
  private limit(response: ServerResponse, integration: IntegrationRecord): void {
    const limiter = this.runtime.keyLimiter;
    const decision = limiter.take(`integration:${integration.id}`);
    response.setHeader("RateLimit-Policy", limiter.policyHeader(RATE_POLICY));
    response.setHeader("RateLimit", limiter.rateLimitHeader(RATE_POLICY, decision));
    if (!decision.allowed)
      throw new AppError("rate_limited", `integration ${integration.id} is over its rate limit`, {
        retryAfterSeconds: decision.resetSeconds
      });
  }

  private authenticate(request: Request): IntegrationCaller {
    const id = String(request.params.id ?? "");
    const eventId = header(request, "webhook-id");
    const signature = signatureOf(request);
    if (signature !== undefined || eventId !== undefined) {
      const signed = {id: eventId, timestamp: header(request, "webhook-timestamp"), signature};
      return {
        integration: this.integrations.authenticateSigned(id, signed, request.rawBody ?? Buffer.alloc(0)),
        eventId: eventId ?? null
      };
    }
    const token = request.query.token;
    if (typeof token === "string" && token !== "")
      return {integration: this.integrations.authenticateToken(id, token), eventId: null};
    throw new AppError(
      "unauthenticated",
      "send an API key (X-API-Key or Authorization: Bearer), sign the event with the integration's secret, or use the integration's url"
    );
  }
}

/** Key, signature or URL token, documented like every other authenticated endpoint. */
export function AuthorizeIntegrationEvent() {
  return combineMethodDecorators(
    AuthOptions(ApiKeyAuthMiddleware, {scope: EVENT_SCOPE}),
    UseAuth(IntegrationAuthMiddleware),
    Security("api_key"),
    Returns(401, ProblemModel).Description(
      "No valid credential: an unknown or revoked key, a bad signature, a timestamp outside the 5-minute window, or a wrong token"
    ),
    Returns(403, ProblemModel).Description(`The key lacks the scope ${EVENT_SCOPE}`),
    Returns(429, ProblemModel).Description("Rate limit exceeded; see Retry-After"),
    Returns(500, ProblemModel).Description("Internal error")
  );
}
