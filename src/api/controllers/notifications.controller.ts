import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, HeaderParams, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Pattern, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {NotificationsService} from "../../services/notifications/notifications.service.js";
import {HeartbeatsService} from "../../services/heartbeats/heartbeats.service.js";
import {acceptAlert, IDEMPOTENCY_KEY} from "../http/send-alert.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {callerOf} from "../auth/api-access.js";
import {
  AcknowledgeModel,
  NotificationModel,
  ResolvedNotificationModel,
  NotificationPageModel,
  NotificationShortModel,
  SendNotificationModel
} from "../models/notification.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseChoice, parseLimit} from "../http/query.js";
import {answer, JsonBody} from "../http/respond.js";
import {expressRequest} from "../typed-tsed.js";
import {NOTIFICATION_STATUSES, PRIORITIES} from "../../domain/vocabulary.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/notifications")
@Tags(API_TAGS.notifications)
export class NotificationsController {
  private readonly notifications = inject(NotificationsService);
  private readonly heartbeats = inject(HeartbeatsService);

  @Post("/send")
  @Authorize("notifications:send")
  @Summary("Send an alert")
  @Description(
    "Accepts an alert and starts its escalation. `Prefer: return=representation` answers 200 with the long form; otherwise 202 with the short form. Both carry Location."
  )
  @(Returns(202, NotificationShortModel).Description("Accepted (short form)"))
  @(Returns(200, NotificationModel).Description("Accepted (long form, with Prefer: return=representation)"))
  @JsonBody()
  @(Returns(409, ProblemModel).Description("The same Idempotency-Key is still being processed"))
  @(Returns(422, ProblemModel).Description(
    "Unknown recipient, group or schedule, or Idempotency-Key reused with another body"
  ))
  @(Returns(503, ProblemModel).Description("The journal cannot commit; retry after Retry-After"))
  async send(
    // Validated against the model's schema and documented from it, but not mapped into a class
    // instance: the service reads plain fields, and json-mapper cost more than ajv on this route.
    @Required() @BodyParams({useMapper: false}) body: SendNotificationModel,
    @Context() ctx: PlatformContext,
    // Any text: a header is always a string, so there is nothing to validate.
    @HeaderParams({expression: "prefer", useValidation: false}) prefer?: string,
    // Documented here, checked in acceptAlert: the check's own message says what a valid key is.
    @HeaderParams({expression: "idempotency-key", useValidation: false})
    @Pattern(IDEMPOTENCY_KEY)
    idempotencyKey?: string
  ) {
    const request = expressRequest(ctx);
    const rawBody = request.rawBody ?? Buffer.alloc(0);
    return answer(
      ctx,
      await acceptAlert(this.notifications, {body, rawBody, prefer, idempotencyKey, access: callerOf(request)})
    );
  }

  @Get("/")
  @Authorize("notifications:read")
  @Summary("List notifications, newest first")
  @Returns(200, NotificationPageModel)
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
  @Returns(200, NotificationModel)
  @Returns(404, ProblemModel)
  get(@PathParams("id") id: string) {
    return this.notifications.get(id);
  }

  @Post("/:id/ack")
  @Authorize("notifications:ack")
  @Summary("Acknowledge: stops the escalation")
  @Description(
    "Idempotent: acknowledging again returns the first acknowledgement unchanged. Allowed from queued, notifying and exhausted."
  )
  @JsonBody()
  @Returns(200, NotificationModel)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The notification is resolved"))
  async acknowledge(
    @PathParams("id") id: string,
    @Context() ctx: PlatformContext,
    @BodyParams() body?: AcknowledgeModel
  ) {
    const {actor, principal} = callerOf(expressRequest(ctx));
    return this.notifications.acknowledge(
      id,
      {by: body?.by ?? principal.name, note: body?.note ?? null, via: "api"},
      actor
    );
  }

  @Post("/:id/resolve")
  @Authorize("notifications:ack")
  @Summary("Resolve: the problem is gone; stops the escalation")
  @Returns(200, ResolvedNotificationModel)
  @Returns(404, ProblemModel)
  async resolve(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    const view = await this.notifications.resolve(id, actorOf(ctx));
    // A heartbeat's page closed by hand: say what the heartbeat is now (still down, watched again).
    const heartbeat = await this.heartbeats.afterPageClosed(view.dedup_key);
    return heartbeat ? {...view, heartbeat} : view;
  }
}
