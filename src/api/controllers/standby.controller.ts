import {Controller, inject} from "@tsed/di";
import {Get, Returns, Summary, Tags} from "@tsed/schema";
import {API_TAGS} from "../http/openapi-tags.js";
import {Public} from "../auth/public.js";
import {StandbyStatus} from "../standby/standby-door.js";

/**
 * The two routes a standby answers (docs/high-availability.md, "The standby"): it is alive, and
 * it is the standby, with how far its copy is behind. Its gate (`standbyGate`) refuses the rest.
 */
@Controller("/")
@Public()
export class StandbyController {
  // Read when asked, not when built: the active's injector builds every registered controller,
  // this one too (unmounted there), and an active box has no StandbyStatus.
  private get standby(): StandbyStatus {
    return inject(StandbyStatus);
  }

  @Get("/healthz")
  @Tags(API_TAGS.health)
  @Summary("Liveness of a standby: its role, box, the epoch of its copy and its lag")
  @Returns(200)
  healthz() {
    return {status: "ok", ...this.standby.state()};
  }

  @Get("/readyz")
  @Tags(API_TAGS.health)
  @Summary("A standby is ready to take over, not to serve: status standby, with its replication state")
  @Returns(200)
  readyz() {
    const tail = this.standby.tail();
    // A tail that cannot come home is said where monitoring looks, not only in the log: those alerts
    // were accepted and page nobody until the active takes them.
    if (!tail) return {status: "standby", replication: this.standby.state()};
    const reason = `${tail.waiting} former journal(s) of this box hold alerts the active lacks and cannot take yet${tail.last_failure ? ` (${tail.last_failure})` : ""}: kept here, retried every 2 s`;
    return {status: "standby", replication: this.standby.state(), reasons: [reason], tail};
  }
}
