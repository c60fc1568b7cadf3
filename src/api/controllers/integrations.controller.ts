import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {AnyOf, Delete, Description, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {IntegrationsService, type IntegrationInput} from "../../services/integrations/integrations.service.js";
import {IntegrationEvents} from "../../services/integrations/intake/integration-events.js";
import {bodyFingerprint, IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {
  actionFromGenericEvent,
  actionsFromAlertmanager,
  type AlertmanagerPayload,
  type GenericEvent
} from "../../services/integrations/intake/integration-payloads.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  AlertmanagerWebhookModel,
  EventAnswerModel,
  GenericEventModel,
  IntegrationInputModel,
  IntegrationModel,
  IntegrationPageModel,
  IntegrationWithSecretModel,
  KeptMessagePageModel
} from "../models/integration.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {invalid} from "../../services/shared/errors.js";
import {parseLimit, requireObject} from "../http/query.js";
import {answer, JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {AuthorizeIntegrationEvent, integrationCallerOf} from "./integration-auth.middleware.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {expressRequest} from "../typed-tsed.js";

@Controller("/api/v1/integrations")
@Tags(API_TAGS.integrations)
export class IntegrationsController {
  private readonly integrations = inject(IntegrationsService);
  private readonly eventHandler = inject(IntegrationEvents);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("admin")
  @Summary("List integrations (never their secrets)")
  @Returns(200, IntegrationPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.integrations.list(parseLimit(limit), cursor || null);
    return {items: page.items.map((integration) => this.integrations.view(integration)), next_cursor: page.next};
  }

  @Post("/")
  @Authorize("admin")
  @JsonBody()
  @Summary("Create an inbound integration")
  @Description(
    "The secret (for signing events) is in this response only; `url` (for senders that can neither sign nor set headers) stays visible to admin keys. A modbus or opcua integration has neither (`url` null, no `secret`): Klaxon asks its device."
  )
  @Returns(201, IntegrationWithSecretModel)
  @IdempotentCreate({unprocessable: "Unknown target"})
  create(@Required() @BodyParams() body: IntegrationInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const {integration, secret} = await this.integrations.create(body as IntegrationInput, actorOf(ctx));
      return {
        location: `/api/v1/integrations/${integration.id}`,
        resource: this.integrations.view(integration),
        ...(secret ? {secrets: {secret}} : {})
      };
    });
  }

  @Get("/:id")
  @Authorize("admin")
  @Summary("Read an integration (never its secret)")
  @Returns(200, IntegrationModel)
  @Returns(404, ProblemModel)
  get(@PathParams("id") id: string) {
    return this.integrations.view(this.integrations.get(id));
  }

  @Post("/:id/read")
  @Authorize("admin")
  @Summary("Read a modbus or opcua integration's points now")
  @Description(
    "Reads every point through the device link at once and answers the integration with each point's state and the link's: to see the values before anyone relies on them."
  )
  @Returns(200, IntegrationModel)
  @Returns(404, ProblemModel)
  @(Returns(400, ProblemModel).Description("Not a modbus or opcua integration"))
  readNow(@PathParams("id") id: string) {
    return this.integrations.readNow(id);
  }

  @Get("/:id/log")
  @Authorize("admin")
  @Summary("Messages a device integration kept: they matched no rule, or were refused (newest first)")
  @Description(
    "The newest 200 per integration are kept. A rate-limited message is counted in `stats` but not kept, so a flood cannot push the rest out."
  )
  @Returns(200, KeptMessagePageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  @Returns(404, ProblemModel)
  log(@PathParams("id") id: string, @QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.integrations.log(id, parseLimit(limit), parseLogCursor(cursor));
    return {items: page.items, next_cursor: page.next === null ? null : String(page.next)};
  }

  @Patch("/:id")
  @Authorize("admin")
  @JsonBody()
  @Summary("Update an integration (JSON Merge Patch, RFC 7396): name, target, default_priority, rules")
  @Returns(200, IntegrationModel)
  @Returns(404, ProblemModel)
  @(Returns(422, ProblemModel).Description("Unknown target"))
  async update(@PathParams("id") id: string, @Required() @BodyParams() body: unknown, @Context() ctx: PlatformContext) {
    const merged = this.integrations.patched(id, requireObject(body));
    await this.ajv.validate(merged, {type: IntegrationInputModel});
    return this.integrations.view(await this.integrations.replace(id, merged, actorOf(ctx)));
  }

  @Post("/:id/rotate-credentials")
  @Authorize("admin")
  @Summary("Issue a new secret and key-less URL; the old ones stop working at once")
  @Description(
    "For a leaked secret or URL. The new secret is in this response only. The id stays, so alerts fired before are still resolved by the same alert ids. " +
      "To move a sender over without a gap, let it send with an API key (scope notifications:send) while it is reconfigured."
  )
  @Returns(200, IntegrationWithSecretModel)
  @Returns(404, ProblemModel)
  @(Returns(400, ProblemModel).Description("A modbus or opcua integration: it has no credentials"))
  async rotateCredentials(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    const {integration, secret} = await this.integrations.rotateCredentials(id, actorOf(ctx));
    return {...this.integrations.view(integration), secret};
  }

  @Delete("/:id")
  @Authorize("admin")
  @Summary("Delete an integration; its key-less URL and secret stop working at once")
  @Returns(204)
  @Returns(404, ProblemModel)
  async remove(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    await this.integrations.remove(id, actorOf(ctx));
    noContent(ctx);
  }

  @Post("/:id/events")
  @AuthorizeIntegrationEvent()
  @JsonBody()
  @Summary("Send an integration's event")
  @Description(
    "Authenticated by X-API-Key (scope notifications:send), OR signed with the integration's secret exactly as outbound webhooks are " +
      "(webhook-id, webhook-timestamp, webhook-signature or X-Service-Signature; refused more than 300 s from the gateway's clock), OR by the `token` " +
      "of the integration's url. The body is the integration kind's format: Prometheus Alertmanager's webhook (version 4) for alertmanager, " +
      "generic events for every other kind (an email, mqtt or snmp_trap integration takes them too, to test its target). " +
      "A signed event whose webhook-id was handled before runs nothing and answers the first results again, with Idempotent-Replayed: true."
  )
  @(Returns(202, EventAnswerModel).Description("Every alert of the event was handled; `results` says how"))
  @(Returns(404, ProblemModel).Description("Unknown integration (with an API key)"))
  @(Returns(409, ProblemModel).Description("A signed event with this webhook-id is still being handled"))
  @(Returns(422, ProblemModel).Description(
    "The integration's target no longer exists, or this webhook-id came before with another body"
  ))
  @(Returns(503, ProblemModel).Description("The journal cannot commit; retry after Retry-After"))
  async events(
    @PathParams("id") id: string,
    @BodyParams({useValidation: false, useMapper: false})
    @AnyOf(GenericEventModel, AlertmanagerWebhookModel)
    body: unknown,
    @Context() ctx: PlatformContext,
    @QueryParams("token")
    @Description("The token of the integration's url, for senders that can neither sign nor set headers")
    _token?: string
  ) {
    const request = expressRequest(ctx);
    const caller = integrationCallerOf(request);
    const integration = caller?.integration ?? this.integrations.get(id);
    const actions =
      integration.kind === "alertmanager"
        ? actionsFromAlertmanager(
            (await this.validated(body, AlertmanagerWebhookModel)) as AlertmanagerPayload,
            integration.default_priority
          )
        : [
            actionFromGenericEvent(
              (await this.validated(body, GenericEventModel)) as GenericEvent,
              integration.default_priority
            )
          ];
    const eventId = caller?.eventId ?? null;
    // A signed event's webhook-id is its idempotency key, scoped to the integration (retries re-sign with a new timestamp, so only the body is compared).
    const repeat =
      eventId === null
        ? null
        : {
            apiKeyId: `integration:${integration.id}`,
            key: eventId,
            fingerprint: bodyFingerprint(request.rawBody),
            header: "webhook-id"
          };
    const {results, replayed} = await this.eventHandler.handle(
      integration,
      actions,
      {type: "integration", id: integration.id},
      repeat
    );
    return answer(ctx, {
      status: 202,
      headers: replayed ? {"Idempotent-Replayed": "true"} : {},
      body: {integration_id: integration.id, results}
    });
  }

  private async validated(
    body: unknown,
    model: typeof GenericEventModel | typeof AlertmanagerWebhookModel
  ): Promise<unknown> {
    await this.ajv.validate(requireObject(body), {type: model});
    return body;
  }
}

function parseLogCursor(raw: string | undefined): number | null {
  if (raw === undefined || raw === "") return null;
  if (!/^\d{1,15}$/.test(raw)) throw invalid([{pointer: "/cursor", detail: "must be a next_cursor this route gave"}]);
  return Number(raw);
}
