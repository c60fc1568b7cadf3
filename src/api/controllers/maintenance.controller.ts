import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Delete, Description, Get, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {MaintenanceService} from "../../services/maintenance/index.js";
import {MAINTENANCE_STATUSES} from "../../domain/maintenance.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {MaintenanceInputModel, MaintenanceListModel, MaintenanceModel} from "../models/maintenance.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseChoice, parseLimit} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/maintenance")
@Tags(API_TAGS.maintenance)
export class MaintenanceController {
  private readonly maintenance = inject(MaintenanceService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("List maintenance windows, latest start first")
  @Returns(200, MaintenanceListModel)
  @(Returns(400, ProblemModel).Description("Invalid status or limit"))
  list(@QueryParams("status") status?: string, @QueryParams("limit") limit?: string) {
    const windows = this.maintenance.list(parseChoice("status", status, MAINTENANCE_STATUSES), parseLimit(limit));
    return {items: windows.map((window) => this.maintenance.view(window))};
  }

  @Post("/")
  @Authorize("recipients:write", "operate")
  @JsonBody()
  @Summary("Plan a maintenance window")
  @Description(
    "While it is active, an alert sent to one of `targets`, with a `source` in `sources`, coming through one of `integrations` or paging for one of `heartbeats` is accepted and recorded as `suppressed`, and nobody is paged. When the window ends, integration alerts still firing and heartbeats still down page as usual."
  )
  @Returns(201, MaintenanceModel)
  @(Returns(400, ProblemModel).Description(
    "Bad times (ends_at not after starts_at, or past), or no list names anything"
  ))
  @IdempotentCreate({unprocessable: "A target, integration or heartbeat does not exist"})
  create(@Required() @BodyParams() body: MaintenanceInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const window = await this.maintenance.create(body, actorOf(ctx));
      return {location: `/api/v1/maintenance/${window.uuid}`, resource: this.maintenance.view(window)};
    });
  }

  @Get("/:uuid")
  @Authorize("recipients:read")
  @Summary("Read a maintenance window")
  @Returns(200, MaintenanceModel)
  @Returns(404, ProblemModel)
  get(@PathParams("uuid") uuid: string) {
    return this.maintenance.view(this.maintenance.get(uuid));
  }

  @Post("/:uuid/end")
  @Authorize("recipients:write", "operate")
  @Summary("End a window now: what it held and may still be firing pages at once")
  @Returns(200, MaintenanceModel)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The window has already ended"))
  async end(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    return this.maintenance.view(await this.maintenance.end(uuid, actorOf(ctx)));
  }

  @Delete("/:uuid")
  @Authorize("recipients:write", "operate")
  @Summary("Delete a window that has not begun")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The window has begun: end it instead, it stays on record"))
  async remove(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    await this.maintenance.remove(uuid, actorOf(ctx));
    noContent(ctx);
  }
}
