import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Description, Get, Patch, Pattern, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {WebhooksService} from "../../services/webhooks/webhooks.service.js";
import {invalid} from "../../services/shared/errors.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  RedeliveryModel,
  WebhookDeliveryPageModel,
  WebhookInputModel,
  WebhookModel,
  WebhookPageModel,
  WebhookWithSecretModel
} from "../models/webhook.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit, requireObject} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";

const DELIVERY_ID = /^\d{1,15}$/;

function deliveryId(raw: string | undefined, pointer: string): number | null {
  if (raw === undefined) return null;
  if (!DELIVERY_ID.test(raw)) throw invalid([{pointer, detail: "not a delivery id"}]);
  return Number(raw);
}

@Controller("/api/v1/webhooks")
@Tags(API_TAGS.webhooks)
export class WebhooksController {
  private readonly webhooks = inject(WebhooksService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("admin")
  @Summary("List webhook subscriptions (never their secrets)")
  @Returns(200, WebhookPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.webhooks.list(parseLimit(limit), cursor || null);
    return {items: page.items.map((subscription) => this.webhooks.view(subscription)), next_cursor: page.next};
  }

  @Post("/")
  @Authorize("admin")
  @JsonBody()
  @Summary("Subscribe a URL to events")
  @Description(
    "Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature; X-Service-Signature carries the same value). The secret is in this response only."
  )
  @Returns(201, WebhookWithSecretModel)
  @IdempotentCreate()
  create(@Required() @BodyParams() body: WebhookInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const {subscription, secret} = await this.webhooks.create(body, actorOf(ctx));
      return {
        location: `/api/v1/webhooks/${subscription.id}`,
        resource: this.webhooks.view(subscription),
        secrets: {secret}
      };
    });
  }

  @Get("/:id")
  @Authorize("admin")
  @Summary("Read a webhook subscription (never its secret)")
  @Returns(200, WebhookModel)
  @Returns(404, ProblemModel)
  get(@PathParams("id") id: string) {
    return this.webhooks.view(this.webhooks.get(id));
  }

  @Patch("/:id")
  @Authorize("admin")
  @JsonBody()
  @Summary("Update a subscription (JSON Merge Patch, RFC 7396)")
  @Returns(200, WebhookModel)
  @Returns(404, ProblemModel)
  async update(@PathParams("id") id: string, @Required() @BodyParams() body: unknown, @Context() ctx: PlatformContext) {
    const merged = this.webhooks.patched(id, requireObject(body));
    await this.ajv.validate(merged, {type: WebhookInputModel});
    return this.webhooks.view(await this.webhooks.replace(id, merged, actorOf(ctx)));
  }

  @Delete("/:id")
  @Authorize("admin")
  @Summary("Delete a subscription; deliveries still queued for it are given up")
  @Returns(204)
  @Returns(404, ProblemModel)
  async remove(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    await this.webhooks.remove(id, actorOf(ctx));
    noContent(ctx);
  }

  @Post("/:id/rotate-secret")
  @Authorize("admin")
  @Summary("Issue a new signing secret")
  @Description(
    "The new secret is in this response only. For 24 hours deliveries carry signatures with both the old and the new secret."
  )
  @Returns(200, WebhookWithSecretModel)
  @Returns(404, ProblemModel)
  async rotateSecret(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    const {subscription, secret} = await this.webhooks.rotateSecret(id, actorOf(ctx));
    return {...this.webhooks.view(subscription), secret};
  }

  @Get("/:id/deliveries")
  @Authorize("admin")
  @Summary("Every delivery attempt, newest first")
  @Returns(200, WebhookDeliveryPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  @Returns(404, ProblemModel)
  deliveries(
    @PathParams("id") id: string,
    @QueryParams("limit") limit?: string,
    @QueryParams("cursor") cursor?: string
  ) {
    return this.webhooks.listDeliveries(id, parseLimit(limit), deliveryId(cursor || undefined, "/cursor"));
  }

  @Post("/:id/deliveries/:deliveryId/redeliver")
  @Authorize("admin")
  @Summary("Send a delivery's event again")
  @Description(
    "Queues the event for this subscription behind anything already waiting for it; same webhook-id as before, so receivers can recognise it."
  )
  @Returns(202, RedeliveryModel)
  @(Returns(400, ProblemModel).Description("The delivery id is not a delivery's number"))
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The subscription is disabled"))
  async redeliver(
    @PathParams("id") id: string,
    @PathParams({expression: "deliveryId", useValidation: false}) @Pattern(DELIVERY_ID) rawDeliveryId: string,
    @Context() ctx: PlatformContext
  ) {
    const queued = await this.webhooks.redeliver(id, deliveryId(rawDeliveryId, "/delivery_id") as number, actorOf(ctx));
    ctx.response.status(202);
    return queued;
  }
}
