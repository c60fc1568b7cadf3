import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {SchedulesService, type ScheduleInput} from "../../services/recipients/schedules.service.js";
import {MAX_SHIFTS_RANGE_DAYS, OnCallService} from "../../services/recipients/on-call.service.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  OnCallModel,
  ScheduleInputModel,
  ScheduleModel,
  ScheduleOverrideInputModel,
  ScheduleOverrideListModel,
  ScheduleOverrideModel,
  SchedulePageModel,
  ShiftsModel
} from "../models/schedule.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseInstant, parseLimit, requireObject} from "../http/query.js";
import {JsonBody, created, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {Runtime} from "../runtime.js";

const DAY_MS = 86_400_000;

@Controller("/api/v1/schedules")
@Tags(API_TAGS.schedules)
export class SchedulesController {
  private readonly schedules = inject(SchedulesService);
  private readonly onCall = inject(OnCallService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);
  private readonly runtime = inject(Runtime);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("List on-call schedules")
  @Returns(200, SchedulePageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.schedules.list(parseLimit(limit), cursor || null);
    return {items: page.items.map((schedule) => this.schedules.view(schedule)), next_cursor: page.next};
  }

  @Post("/")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Create a schedule")
  @Returns(201, ScheduleModel)
  @(Returns(400, ProblemModel).Description("Invalid fields: a bad zone, a layer that cannot be evaluated"))
  @IdempotentCreate({unprocessable: "A member, crew or fallback names no recipient or group"})
  // No mapper: Ts.ED's cannot map the nulls in a shift pattern's cycle (an array of arrays); the schema still validates.
  create(@Required() @BodyParams({useMapper: false}) body: ScheduleInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const schedule = await this.schedules.create(body as ScheduleInput, actorOf(ctx));
      return {location: `/api/v1/schedules/${schedule.uuid}`, resource: this.schedules.view(schedule)};
    });
  }

  @Get("/:uuid")
  @Authorize("recipients:read")
  @Summary("Read a schedule")
  @Returns(200, ScheduleModel)
  @Returns(404, ProblemModel)
  get(@PathParams("uuid") uuid: string) {
    return this.schedules.view(this.schedules.get(uuid));
  }

  @Patch("/:uuid")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Update a schedule (JSON Merge Patch, RFC 7396); overrides are changed on their own routes")
  @Returns(200, ScheduleModel)
  @Returns(400, ProblemModel)
  @Returns(404, ProblemModel)
  @Returns(422, ProblemModel)
  async update(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: unknown,
    @Context() ctx: PlatformContext
  ) {
    const merged = this.schedules.patched(uuid, requireObject(body));
    await this.ajv.validate(merged, {type: ScheduleInputModel});
    return this.schedules.view(await this.schedules.replace(uuid, merged, actorOf(ctx)));
  }

  @Delete("/:uuid")
  @Authorize("recipients:write")
  @Summary("Delete a schedule that no open alert, heartbeat or integration pages")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("Still paged by an open notification, a heartbeat or an integration"))
  async remove(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    await this.schedules.remove(uuid, actorOf(ctx));
    noContent(ctx);
  }

  @Post("/:uuid/ical-token/rotate")
  @Authorize("recipients:write")
  @Summary("A new iCal feed URL for the schedule; the old one stops working at once")
  @Returns(200, ScheduleModel)
  @Returns(404, ProblemModel)
  async rotateIcalToken(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    return this.schedules.view(await this.schedules.rotateIcalToken(uuid, actorOf(ctx)));
  }

  @Get("/:uuid/on-call")
  @Authorize("recipients:read")
  @Summary("Who is on call at an instant (now by default), and the shift that makes them so")
  @Returns(200, OnCallModel)
  @(Returns(400, ProblemModel).Description("`at` is not an ISO 8601 date-time"))
  @Returns(404, ProblemModel)
  onCallAt(@PathParams("uuid") uuid: string, @QueryParams("at") at?: string) {
    return this.onCall.onCall(uuid, parseInstant("at", at, this.runtime.clock.now()));
  }

  @Get("/:uuid/shifts")
  @Authorize("recipients:read")
  @Summary(
    `The final shifts (after overrides) and gaps from \`from\` (now) to \`to\` (14 days on; at most ${MAX_SHIFTS_RANGE_DAYS})`
  )
  @Returns(200, ShiftsModel)
  @(Returns(400, ProblemModel).Description("A bad instant, or a range that is empty or too long"))
  @Returns(404, ProblemModel)
  shifts(@PathParams("uuid") uuid: string, @QueryParams("from") from?: string, @QueryParams("to") to?: string) {
    const start = parseInstant("from", from, this.runtime.clock.now());
    return this.onCall.shifts(uuid, start, parseInstant("to", to, start + 14 * DAY_MS));
  }

  @Get("/:uuid/overrides")
  @Authorize("recipients:read")
  @Summary("A schedule's overrides, by start")
  @Returns(200, ScheduleOverrideListModel)
  @Returns(404, ProblemModel)
  overrides(@PathParams("uuid") uuid: string) {
    return {items: this.onCall.overrides(uuid)};
  }

  @Post("/:uuid/overrides")
  @Authorize("recipients:write", "operate")
  @JsonBody()
  @Summary("Put someone else on call for a while: wins over every layer")
  @Returns(201, ScheduleOverrideModel)
  @(Returns(400, ProblemModel).Description("ends_at is not later than starts_at"))
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("Overlaps another override of the schedule"))
  @(Returns(422, ProblemModel).Description("recipient_uuid names no recipient"))
  async addOverride(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: ScheduleOverrideInputModel,
    @Context() ctx: PlatformContext
  ) {
    const override = await this.onCall.addOverride(uuid, body, actorOf(ctx));
    return created(ctx, `/api/v1/schedules/${uuid}/overrides/${override.id}`, override);
  }

  @Delete("/:uuid/overrides/:id")
  @Authorize("recipients:write", "operate")
  @Summary("Delete an override")
  @Returns(204)
  @Returns(404, ProblemModel)
  async removeOverride(
    @PathParams("uuid") uuid: string,
    @PathParams("id") id: string,
    @Context() ctx: PlatformContext
  ) {
    await this.onCall.removeOverride(uuid, id, actorOf(ctx));
    noContent(ctx);
  }
}
