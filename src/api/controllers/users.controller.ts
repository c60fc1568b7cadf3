import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Delete, Description, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {describeUser, DashboardUsersService, type UserChange} from "../../services/users/dashboard-users.service.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import type {Role} from "../../domain/roles.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  CreateUserModel,
  SetUserPasswordModel,
  UpdateUserModel,
  UserListModel,
  UserModel
} from "../models/user.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/users")
@Tags(API_TAGS.users)
export class UsersController {
  private readonly users = inject(DashboardUsersService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("admin")
  @Summary("List the dashboard's users (never their passwords)")
  @Returns(200, UserListModel)
  list() {
    return {items: this.users.list()};
  }

  @Post("/")
  @Authorize("admin")
  @JsonBody()
  @Summary("Create a dashboard user with a role")
  @Returns(201, UserModel)
  @IdempotentCreate({
    conflict: "A user of that name exists",
    unprocessable: "recipient_uuid names no recipient"
  })
  create(@Required() @BodyParams() body: CreateUserModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const user = await this.users.create({...body, role: body.role as Role}, actorOf(ctx));
      return {location: `/api/v1/users/${user.id}`, resource: user};
    });
  }

  @Get("/:id")
  @Authorize("admin")
  @Summary("Read a dashboard user")
  @Returns(200, UserModel)
  @Returns(404, ProblemModel)
  get(@PathParams("id") id: string) {
    return describeUser(this.users.get(id));
  }

  @Patch("/:id")
  @Authorize("admin")
  @JsonBody()
  @Summary("Change a user's name, role or recipient")
  @Description("The role applies to the user's next request, in any session already open.")
  @Returns(200, UserModel)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The name is taken, or this would leave no admin"))
  @(Returns(422, ProblemModel).Description("recipient_uuid names no recipient"))
  update(
    @PathParams("id") id: string,
    @Required() @BodyParams() body: UpdateUserModel,
    @Context() ctx: PlatformContext
  ) {
    return this.users.update(id, body as UserChange, actorOf(ctx));
  }

  @Post("/:id/password")
  @Authorize("admin")
  @JsonBody()
  @Summary("Set a user's password (a reset by an admin)")
  @Description("The user's open sessions end; they sign in with the new password.")
  @Returns(200, UserModel)
  @Returns(404, ProblemModel)
  setPassword(
    @PathParams("id") id: string,
    @Required() @BodyParams() body: SetUserPasswordModel,
    @Context() ctx: PlatformContext
  ) {
    return this.users.setPassword(id, body.password, actorOf(ctx));
  }

  @Delete("/:id")
  @Authorize("admin")
  @Summary("Delete a dashboard user; their sessions end")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("The last admin"))
  async remove(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    await this.users.remove(id, actorOf(ctx));
    noContent(ctx);
  }
}
