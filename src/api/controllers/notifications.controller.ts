import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, HeaderParams, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Pattern, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {NotificationsService, type SendInput} from "../../services/notifications/notifications.service.js";
import {acceptAlert, IDEMPOTENCY_KEY} from "../http/send-alert.js";
import {actorOf, apiKeyOf, Authorize} from "../auth/authorize.js";
import {AcknowledgeModel, NotificationModel, NotificationPageModel, NotificationShortModel, SendNotificationModel} from "../models/notification.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseChoice, parseLimit} from "../http/query.js";
import {JsonBody, sendJson} from "../http/respond.js";
import {NOTIFICATION_STATUSES, PRIORITIES} from "../../domain/vocabulary.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/notifications")
@Tags(API_TAGS.notifications)
export class NotificationsController {
  private readonly notifications = inject(NotificationsService);

  @Post("/send")
  @Authorize("notifications:send")
  @Summary("Send an alert")
  @Description("Accepts an alert and starts its escalation. `Prefer: return=representation` answers 200 with the long form; otherwise 202 with the short form. Both carry Location.")
  @(Returns(202, NotificationShortModel).Description("Accepted (short form)"))
  @(Returns(200, NotificationModel).Description("Accepted (long form, with Prefer: return=representation)"))
  @JsonBody()
  @(Returns(409, ProblemModel).Description("The same Idempotency-Key is still being processed"))
  @(Returns(422, ProblemModel).Description("Unknown recipient or group, or Idempotency-Key reused with another body"))
  @(Returns(503, ProblemModel).Description("The journal cannot commit; retry after Retry-After"))
  async send(
    // Validated against the model's schema and documented from it, but not mapped into a class
    // instance: the service reads plain fields, and json-mapper cost more than ajv on this route.
    @Required() @BodyParams({useMapper: false}) body: SendNotificationModel,
    @Context() ctx: PlatformContext,
    @HeaderParams("prefer") prefer?: string,
    // Documented here, checked in acceptAlert: the check's own message says what a valid key is.
    @HeaderParams({expression: "idempotency-key", useValidation: false}) @Pattern(IDEMPOTENCY_KEY) idempotencyKey?: string
  ): Promise<void> {
    const access = {actor: actorOf(ctx), principal: apiKeyOf(ctx)};
    const rawBody = ctx.request.raw.rawBody ?? Buffer.alloc(0);
    const answer = await acceptAlert(this.notifications, {body: body as SendInput, rawBody, prefer, idempotencyKey, access});
    for (const [name, value] of Object.entries(answer.headers)) ctx.response.raw.setHeader(name, value);
    sendJson(ctx, answer.status, answer.body);
  }

  @Get("/")
  @Authorize("notifications:read")
  @Summary("List notifications, newest first")
  @(Returns(200, NotificationPageModel))
  @(Returns(400, ProblemModel).Description("Invalid filter, limit or cursor"))
  list(
    @QueryParams("status") status?: string,
    @QueryParams("recipient_uuid") recipientUuid?: string,
    @QueryParams("priority") priority?: string,
    @QueryParams("limit") limit?: string,
    @QueryParams("cursor") cursor?: string
  ) {
    return this.notifications.list({
      status: parseChoice("status", status, NOTIFICATION_STATUSES),
      recipient_uuid: recipientUuid || undefined,
      priority: parseChoice("priority", priority, PRIORITIES),
      limit: parseLimit(limit),
      cursor: cursor || undefined
    });
  }

  @Get("/:id")
  @Authorize("notifications:read")
  @Summary("Read a notification: status, delivery attempts and acknowledgement")
  @(Returns(200, NotificationModel))
  @(Returns(404, ProblemModel))
  get(@PathParams("id") id: string) {
    return this.notifications.get(id);
  }

  @Post("/:id/ack")
  @Authorize("notifications:ack")
  @Summary("Acknowledge: stops the escalation")
  @Description("Idempotent: acknowledging again returns the first acknowledgement unchanged. Allowed from queued, notifying and exhausted.")
  @JsonBody()
  @(Returns(200, NotificationModel))
  @(Returns(404, ProblemModel))
  @(Returns(409, ProblemModel).Description("The notification is resolved"))
  acknowledge(@PathParams("id") id: string, @Context() ctx: PlatformContext, @BodyParams() body?: AcknowledgeModel) {
    return this.notifications.acknowledge(id, {by: body?.by ?? apiKeyOf(ctx).name, note: body?.note ?? null, via: "api"}, actorOf(ctx));
  }

  @Post("/:id/resolve")
  @Authorize("notifications:ack")
  @Summary("Resolve: the problem is gone; stops the escalation")
  @(Returns(200, NotificationModel))
  @(Returns(404, ProblemModel))
  resolve(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    return this.notifications.resolve(id, actorOf(ctx));
  }
}
