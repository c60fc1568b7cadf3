import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Description, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {HeartbeatsService, type HeartbeatInput} from "../../services/heartbeats/heartbeats.service.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  HeartbeatCreateModel,
  HeartbeatInputModel,
  HeartbeatModel,
  HeartbeatPageModel,
  PingAnswerModel
} from "../models/heartbeat.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit, requireObject} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/heartbeats")
@Tags(API_TAGS.heartbeats)
export class HeartbeatsController {
  private readonly heartbeats = inject(HeartbeatsService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("admin")
  @Summary("List heartbeats with their status and ping URLs")
  @Returns(200, HeartbeatPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.heartbeats.list(parseLimit(limit), cursor || null);
    return {items: page.items.map((definition) => this.heartbeats.view(definition)), next_cursor: page.next};
  }

  @Post("/")
  @Authorize("admin")
  @JsonBody()
  @Summary("Create a heartbeat")
  @Description("Give period_seconds, or schedule with timezone. It stays `new` (it never pages) until its first ping.")
  @Returns(201, HeartbeatModel)
  @IdempotentCreate({conflict: "A heartbeat with this name exists", unprocessable: "Unknown target"})
  create(@Required() @BodyParams() body: HeartbeatCreateModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const {name, ...input} = body;
      const definition = await this.heartbeats.create(name, input as HeartbeatInput, actorOf(ctx));
      return {location: `/api/v1/heartbeats/${definition.name}`, resource: this.heartbeats.view(definition)};
    });
  }

  @Get("/:name")
  @Authorize("admin")
  @Summary("Read a heartbeat with its status and ping URL")
  @Returns(200, HeartbeatModel)
  @Returns(404, ProblemModel)
  get(@PathParams("name") name: string) {
    return this.heartbeats.view(this.heartbeats.get(name));
  }

  @Patch("/:name")
  @Authorize("admin")
  @JsonBody()
  @Summary("Update a heartbeat (JSON Merge Patch, RFC 7396)")
  @Description(
    'Schedule, grace, target and priority; the deadlines move at once. To switch to a cron schedule send {"period_seconds": null, "schedule": ..., "timezone": ...}.'
  )
  @Returns(200, HeartbeatModel)
  @Returns(404, ProblemModel)
  @(Returns(422, ProblemModel).Description("Unknown target"))
  async update(
    @PathParams("name") name: string,
    @Required() @BodyParams() body: unknown,
    @Context() ctx: PlatformContext
  ) {
    const merged = this.heartbeats.patched(name, requireObject(body));
    await this.ajv.validate(merged, {type: HeartbeatInputModel});
    return this.heartbeats.view(await this.heartbeats.replace(name, merged, actorOf(ctx)));
  }

  @Delete("/:name")
  @Authorize("admin")
  @Summary("Delete a heartbeat; a down page it raised stays open")
  @Returns(204)
  @Returns(404, ProblemModel)
  async remove(@PathParams("name") name: string, @Context() ctx: PlatformContext) {
    await this.heartbeats.remove(name, actorOf(ctx));
    noContent(ctx);
  }

  @Post("/:name/rotate-ping-url")
  @Authorize("admin")
  @Summary("Issue a new ping URL; the old one stops working at once")
  @Description(
    "For a leaked ping URL. The heartbeat keeps its schedule, state and any open page; reconfigure the pinging job with the new `ping_url`."
  )
  @Returns(200, HeartbeatModel)
  @Returns(404, ProblemModel)
  async rotatePingUrl(@PathParams("name") name: string, @Context() ctx: PlatformContext) {
    return this.heartbeats.view(await this.heartbeats.rotatePingUrl(name, actorOf(ctx)));
  }

  @Post("/:name/pause")
  @Authorize("admin")
  @Summary("Pause: stop watching until the next ping or a resume")
  @Returns(200, HeartbeatModel)
  @Returns(404, ProblemModel)
  async pause(@PathParams("name") name: string, @Context() ctx: PlatformContext) {
    return this.heartbeats.view(await this.heartbeats.apply(name, {type: "pause"}, actorOf(ctx)));
  }

  @Post("/:name/resume")
  @Authorize("admin")
  @Summary("Resume a paused heartbeat: watched again from now (new if it never pinged)")
  @Returns(200, HeartbeatModel)
  @Returns(404, ProblemModel)
  async resume(@PathParams("name") name: string, @Context() ctx: PlatformContext) {
    return this.heartbeats.view(await this.heartbeats.apply(name, {type: "resume"}, actorOf(ctx)));
  }

  @Post("/:name/ping")
  @Authorize("notifications:send")
  @Summary("Ping a heartbeat with an API key")
  @Description(
    "A good ping: the heartbeat is up until its next due time, and a down page is resolved. Needs notifications:send, the scope of any client that may page."
  )
  @Returns(200, PingAnswerModel)
  @Returns(404, ProblemModel)
  ping(@PathParams("name") name: string, @Context() ctx: PlatformContext) {
    return this.heartbeats.ping(name, "ping", actorOf(ctx));
  }
}
