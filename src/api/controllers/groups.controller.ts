import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {GroupsService, type GroupInput} from "../../services/recipients/groups.service.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {GroupInputModel, GroupModel, GroupPageModel} from "../models/recipient.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit, requireObject} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/groups")
@Tags(API_TAGS.groups)
export class GroupsController {
  private readonly groups = inject(GroupsService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("List recipient groups")
  @Returns(200, GroupPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.groups.list(parseLimit(limit), cursor || null);
    return {items: page.items, next_cursor: page.next};
  }

  @Post("/")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Create a group")
  @Returns(201, GroupModel)
  @IdempotentCreate({unprocessable: "A member is not a recipient"})
  create(@Required() @BodyParams() body: GroupInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const group = await this.groups.create(body as GroupInput, actorOf(ctx));
      return {location: `/api/v1/groups/${group.uuid}`, resource: group};
    });
  }

  @Get("/:uuid")
  @Authorize("recipients:read")
  @Summary("Read a group")
  @Returns(200, GroupModel)
  @Returns(404, ProblemModel)
  get(@PathParams("uuid") uuid: string) {
    return this.groups.get(uuid);
  }

  @Patch("/:uuid")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Update a group (JSON Merge Patch, RFC 7396)")
  @Returns(200, GroupModel)
  @Returns(404, ProblemModel)
  @Returns(422, ProblemModel)
  async update(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: unknown,
    @Context() ctx: PlatformContext
  ) {
    const merged = this.groups.patched(uuid, requireObject(body));
    await this.ajv.validate(merged, {type: GroupInputModel});
    return this.groups.replace(uuid, merged, actorOf(ctx));
  }

  @Delete("/:uuid")
  @Authorize("recipients:write")
  @Summary("Delete a group that no open alert targets")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The target of an open notification"))
  async remove(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    await this.groups.remove(uuid, actorOf(ctx));
    noContent(ctx);
  }
}
