import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Delete, Description, Get, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {ApiKeysService, describeKey} from "../../services/keys/api-keys.service.js";
import {AuditService} from "../../services/shared/audit.service.js";
import {ActorNamesService} from "../../services/users/actor-names.service.js";
import {invalid} from "../../services/shared/errors.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {AuditPageModel, CreatedKeyModel, CreateKeyModel, KeyListModel} from "../models/admin.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import type {Scope} from "../../domain/vocabulary.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/keys")
@Tags(API_TAGS.keys)
export class KeysController {
  private readonly keys = inject(ApiKeysService);
  private readonly idempotency = inject(IdempotencyService);

  @Post("/")
  @Authorize("admin")
  @JsonBody()
  @Summary("Create an API key for one integration")
  @Description("The whole key is in this response only; store it in the integration's secret store.")
  @Returns(201, CreatedKeyModel)
  @IdempotentCreate()
  create(@Required() @BodyParams() body: CreateKeyModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const {record, key} = await this.keys.create(body.name, body.scopes as Scope[], actorOf(ctx), body.owner ?? null);
      return {location: `/api/v1/keys/${record.id}`, resource: describeKey(record), secrets: {key}};
    });
  }

  @Get("/")
  @Authorize("admin")
  @Summary("List API keys (never their secrets)")
  @Returns(200, KeyListModel)
  list() {
    return {items: this.keys.list().map(describeKey)};
  }

  @Delete("/:id")
  @Authorize("admin")
  @Summary("Revoke an API key; only that integration is affected")
  @Returns(204)
  @Returns(404, ProblemModel)
  async revoke(@PathParams("id") id: string, @Context() ctx: PlatformContext) {
    await this.keys.revoke(id, actorOf(ctx));
    noContent(ctx);
  }
}

@Controller("/api/v1/audit")
@Tags(API_TAGS.audit)
export class AuditController {
  private readonly audit = inject(AuditService);
  private readonly names = inject(ActorNamesService);

  @Get("/")
  @Authorize("admin", "read")
  @Summary("The audit log, newest first")
  @Description(
    "Every accepted alert, every state change and every admin change, with who caused it: the key, dashboard user, integration or recipient, by name."
  )
  @Returns(200, AuditPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(
    @QueryParams("limit") limit?: string,
    @QueryParams("cursor") cursor?: string,
    @QueryParams("action") action?: string,
    @QueryParams("subject_id") subjectId?: string,
    @QueryParams("actor_id") actorId?: string
  ) {
    if (cursor !== undefined && !/^\d+$/.test(cursor))
      throw invalid([{pointer: "/cursor", detail: "not a cursor returned by this endpoint"}]);
    const size = parseLimit(limit);
    const entries = this.audit.list({
      limit: size + 1,
      before_seq: cursor === undefined ? undefined : Number(cursor),
      action: action || undefined,
      subject_id: subjectId || undefined,
      actor_id: actorId || undefined
    });
    const items = entries.slice(0, size).map((entry) => ({...entry, actor: this.names.named(entry.actor)}));
    return {items, next_cursor: entries.length > size ? String(items[items.length - 1].seq) : null};
  }
}
