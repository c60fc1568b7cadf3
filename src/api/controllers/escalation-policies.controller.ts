import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {EscalationPoliciesService} from "../../services/recipients/escalation-policies.service.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  EscalationPolicyInputModel,
  EscalationPolicyModel,
  EscalationPolicyPageModel
} from "../models/escalation-policy.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit, requireObject} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/escalation-policies")
@Tags(API_TAGS.escalation_policies)
export class EscalationPoliciesController {
  private readonly policies = inject(EscalationPoliciesService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("List escalation policies")
  @Returns(200, EscalationPolicyPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.policies.list(parseLimit(limit), cursor || null);
    return {items: page.items, next_cursor: page.next};
  }

  @Post("/")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Create an escalation policy")
  @Returns(201, EscalationPolicyModel)
  @IdempotentCreate({unprocessable: "A level names no recipient, group or schedule, or names a policy"})
  create(@Required() @BodyParams() body: EscalationPolicyInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const policy = await this.policies.create(body, actorOf(ctx));
      return {location: `/api/v1/escalation-policies/${policy.uuid}`, resource: policy};
    });
  }

  @Get("/:uuid")
  @Authorize("recipients:read")
  @Summary("Read an escalation policy")
  @Returns(200, EscalationPolicyModel)
  @Returns(404, ProblemModel)
  get(@PathParams("uuid") uuid: string) {
    return this.policies.get(uuid);
  }

  @Patch("/:uuid")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Update an escalation policy (JSON Merge Patch, RFC 7396); running alerts keep their levels")
  @Returns(200, EscalationPolicyModel)
  @Returns(404, ProblemModel)
  @Returns(422, ProblemModel)
  async update(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: unknown,
    @Context() ctx: PlatformContext
  ) {
    const merged = this.policies.patched(uuid, requireObject(body));
    await this.ajv.validate(merged, {type: EscalationPolicyInputModel});
    return this.policies.replace(uuid, merged, actorOf(ctx));
  }

  @Delete("/:uuid")
  @Authorize("recipients:write")
  @Summary("Delete an escalation policy that no heartbeat, integration or open alert pages")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description(
    "Paged by a heartbeat or an integration, or the target of an open notification"
  ))
  async remove(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    await this.policies.remove(uuid, actorOf(ctx));
    noContent(ctx);
  }
}
