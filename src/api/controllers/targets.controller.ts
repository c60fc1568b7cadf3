import {Controller, inject} from "@tsed/di";
import {PathParams} from "@tsed/platform-params";
import {Get, Returns, Summary, Tags} from "@tsed/schema";
import {TargetNames} from "../../services/recipients/target-names.js";
import {Authorize} from "../auth/authorize.js";
import {TargetListModel, TargetModel} from "../models/target.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {API_TAGS} from "../http/openapi-tags.js";

/** Targets by name: what the CLIs' `--to NAME` and the dashboard's pickers ask. */
@Controller("/api/v1/targets")
@Tags(API_TAGS.recipients)
export class TargetsController {
  private readonly names = inject(TargetNames);

  @Get("/")
  @Authorize("recipients:read")
  @Summary("Every recipient, group and schedule an alert can page, with its kind, uuid and name")
  @Returns(200, TargetListModel)
  list() {
    return {items: this.names.list()};
  }

  // notifications:send, not recipients:read: a device that may page a target by uuid may page it by name.
  @Get("/:ref")
  @Authorize("notifications:send")
  @Summary("The recipient, group, schedule or escalation policy a uuid or a name names")
  @Returns(200, TargetModel)
  @(Returns(404, ProblemModel).Description("No recipient, group, schedule or escalation policy has this uuid or name"))
  @(Returns(409, ProblemModel).Description(
    "ambiguous_name: several targets have this name; `detail` lists each with its uuid"
  ))
  resolve(@PathParams("ref") ref: string) {
    return this.names.resolve(ref);
  }
}
