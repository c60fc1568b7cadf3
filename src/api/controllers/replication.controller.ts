import {Controller, inject} from "@tsed/di";
import {BodyParams, HeaderParams} from "@tsed/platform-params";
import {Description, Get, Post, Returns, Summary, Tags} from "@tsed/schema";
import {TailRecoveryService} from "../../services/notifications/tail-recovery.service.js";
import {notFound} from "../../services/shared/errors.js";
import {ProblemModel} from "../models/problem.model.js";
import {TailHandOverModel, TailRecoveryOutcomeModel, TakeoverModel} from "../models/tail.model.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {JsonBody} from "../http/respond.js";
import {Public} from "../auth/public.js";

const TOKEN = {expression: "x-klaxon-box-token", useValidation: false};

/** Box to box: a former active hands the new active the tail it never shipped (docs/high-availability.md). */
@Controller("/api/v1/replication")
@Tags(API_TAGS.replication)
// No API key: the pair's box token, checked by the service, is the credential.
@Public()
export class ReplicationController {
  private readonly tail = inject(TailRecoveryService);

  @Get("/takeover")
  @Summary("What this box's takeover noted of the copy it took over")
  @Returns(200, TakeoverModel)
  @(Returns(401, ProblemModel).Description("Missing or wrong box token"))
  @(Returns(404, ProblemModel).Description("This box never took over"))
  takeover(@HeaderParams(TOKEN) token?: string) {
    this.tail.admit(token);
    const takeover = this.tail.takeover();
    if (!takeover) throw notFound("takeover", "record");
    return takeover;
  }

  @Post("/tail")
  @Summary("Take the alerts, acknowledgements and resolves a former active accepted and never shipped")
  @Description(
    "Each missing alert is accepted under its own id and acceptance time and pages as a new one; an acknowledgement or resolve is applied if the alert is still open here; each is marked recovered (audit entry, event notification.recovered, `recovered` in the long form). A replay changes nothing."
  )
  @Returns(200, TailRecoveryOutcomeModel)
  @JsonBody()
  @(Returns(401, ProblemModel).Description("Missing or wrong box token"))
  recover(@HeaderParams(TOKEN) token: string | undefined, @BodyParams() body: TailHandOverModel) {
    this.tail.admit(token);
    return this.tail.recover(body);
  }
}
