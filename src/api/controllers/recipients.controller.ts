import {Controller, inject} from "@tsed/di";
import {BodyParams, Context, PathParams, QueryParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {AjvService} from "@tsed/ajv";
import {Delete, Description, Get, Patch, Post, Required, Returns, Summary, Tags} from "@tsed/schema";
import {RecipientsService, type RecipientInput} from "../../services/recipients/recipients.service.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {
  RecipientInputModel,
  RecipientModel,
  RecipientPageModel,
  TestPageAnswerModel,
  TestPageInputModel
} from "../models/recipient.model.js";
import {TestPageService} from "../../services/recipients/test-page.service.js";
import type {Channel} from "../../domain/vocabulary.js";
import {ProblemModel} from "../models/problem.model.js";
import {parseLimit, requireObject} from "../http/query.js";
import {JsonBody, noContent} from "../http/respond.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/recipients")
@Tags(API_TAGS.recipients)
export class RecipientsController {
  private readonly recipients = inject(RecipientsService);
  private readonly ajv = inject(AjvService);
  private readonly idempotency = inject(IdempotencyService);
  private readonly testPages = inject(TestPageService);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("List recipients with their channel capabilities")
  @Returns(200, RecipientPageModel)
  @(Returns(400, ProblemModel).Description("Invalid limit or cursor"))
  list(@QueryParams("limit") limit?: string, @QueryParams("cursor") cursor?: string) {
    const page = this.recipients.list(parseLimit(limit), cursor || null);
    return {items: page.items.map((recipient) => this.recipients.view(recipient)), next_cursor: page.next};
  }

  @Post("/")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Create a recipient")
  @Description("At least one of telegram_id, phone or email is required.")
  @Returns(201, RecipientModel)
  @IdempotentCreate()
  create(@Required() @BodyParams() body: RecipientInputModel, @Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const recipient = await this.recipients.create(body as RecipientInput, actorOf(ctx));
      return {location: `/api/v1/recipients/${recipient.uuid}`, resource: this.recipients.view(recipient)};
    });
  }

  @Get("/:uuid")
  @Authorize("recipients:read")
  @Summary("Read a recipient")
  @Returns(200, RecipientModel)
  @Returns(404, ProblemModel)
  get(@PathParams("uuid") uuid: string) {
    return this.recipients.view(this.recipients.get(uuid));
  }

  @Patch("/:uuid")
  @Authorize("recipients:write")
  @JsonBody()
  @Summary("Update a recipient (JSON Merge Patch, RFC 7396)")
  @Description("Escalation timeouts, channel order, quiet hours, contacts. `null` removes a field.")
  @Returns(200, RecipientModel)
  @Returns(404, ProblemModel)
  async update(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: unknown,
    @Context() ctx: PlatformContext
  ) {
    const merged = this.recipients.patched(uuid, requireObject(body));
    await this.ajv.validate(merged, {type: RecipientInputModel});
    return this.recipients.view(await this.recipients.replace(uuid, merged, actorOf(ctx)));
  }

  @Delete("/:uuid")
  @Authorize("recipients:write")
  @Summary("Delete a recipient that is in no group and no open alert")
  @Returns(204)
  @Returns(404, ProblemModel)
  @(Returns(409, ProblemModel).Description("Still a group member or the target of an open notification"))
  async remove(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    await this.recipients.remove(uuid, actorOf(ctx));
    noContent(ctx);
  }

  @Post("/:uuid/test")
  @Authorize("recipients:write", "operate")
  @JsonBody()
  @Summary("Send a recipient a test page now, outside any alert")
  @Description(
    'Sends "[TEST] Klaxon test page for <name>: no action needed" through one channel (or every channel the ' +
      "recipient has a contact for) and answers with each outcome once the channel reports it. No notification " +
      "is created and nobody else is paged. A test that arrives sets the channel's verified_at. One test per " +
      "recipient and channel every 30 s."
  )
  @Returns(200, TestPageAnswerModel)
  @Returns(404, ProblemModel)
  @(Returns(429, ProblemModel).Description("This recipient was sent a test on a requested channel less than 30 s ago"))
  async test(
    @PathParams("uuid") uuid: string,
    @Required() @BodyParams() body: TestPageInputModel,
    @Context() ctx: PlatformContext
  ) {
    const channel = (body.channel ?? "all") as Channel | "all";
    return {recipient_uuid: uuid, results: await this.testPages.send(uuid, channel, actorOf(ctx))};
  }
}
