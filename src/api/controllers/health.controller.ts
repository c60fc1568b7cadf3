import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Get, Hidden, Returns, Summary, Tags} from "@tsed/schema";
import {ReadinessService} from "../../services/operations/readiness.service.js";
import {AppError, type ErrorCode} from "../../services/shared/errors.js";
import {ERROR_CATALOGUE, problemType} from "../errors/catalogue.js";
import {sendJson} from "../http/respond.js";
import {openApiDocument} from "../http/openapi-document.js";
import {ProblemModel} from "../models/problem.model.js";
import {ReadinessModel} from "../models/health.model.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {Public} from "../auth/public.js";
import {Runtime} from "../runtime.js";
import {Replication} from "../../ops/replication/replication.js";
import {publicReadiness} from "../../services/operations/public-readiness.js";
import {ApiKeysService} from "../../services/keys/api-keys.service.js";
import {DashboardAuthService} from "../../dashboard/dashboard-auth.service.js";
import {ApiAccess, presentedKey} from "../auth/api-access.js";
import {expressRequest, expressResponse} from "../typed-tsed.js";

@Controller("/")
@Public()
export class HealthController {
  private readonly readiness = inject(ReadinessService);
  private readonly runtime = inject(Runtime);
  private readonly replication = inject(Replication);
  private readonly dashboard = inject(DashboardAuthService);
  private readonly access = new ApiAccess(inject(ApiKeysService), this.runtime, this.dashboard);

  @Get("/healthz")
  @Tags(API_TAGS.health)
  @Summary("Liveness: 200 while the process serves")
  @Returns(200)
  healthz() {
    const {role, box, epoch} = this.replication.status();
    // One of two boxes says which it is, so the standby knows the active answers (docs/high-availability.md).
    return role === "off" ? {status: "ok"} : {status: "ok", role, box, epoch};
  }

  @Get("/readyz")
  @Tags(API_TAGS.health)
  @Summary(
    "Readiness: 200 when the journal can commit and every open alert can reach someone, else 503; without a key the status, reasons, channels and counts, the details with a key"
  )
  @Returns(200, ReadinessModel)
  @(Returns(503, ReadinessModel).Description(
    "The journal cannot commit, or open alerts are undeliverable (see undeliverable.reasons)"
  ))
  @(Returns(401, ProblemModel).Description(
    "A key was presented and is unknown or revoked: asking for the details with a bad key is refused, not answered with less"
  ))
  @(Returns(403, ProblemModel).Description("The key presented may not read notifications (notifications:read)"))
  async readyz(@Context() ctx: PlatformContext): Promise<void> {
    const detailed = this.withDetails(ctx);
    const readiness = await this.readiness.check(this.runtime.throttledAddresses());
    const summary = publicReadiness(readiness);
    sendJson(
      ctx,
      readiness.ready ? 200 : 503,
      detailed ? {...summary, ...readiness, replication: this.replication.status()} : summary
    );
  }

  // Anyone may ask whether the box is ready; the details (data path, broker URLs, schedule names,
  // addresses) need a key that may read notifications, or a dashboard session. A key that is
  // presented and fails is refused, not quietly answered with less.
  private withDetails(ctx: PlatformContext): boolean {
    const request = expressRequest(ctx);
    const session = this.dashboard.sessionFor({headers: request.headers, method: request.method ?? "GET"});
    if (presentedKey(request.headers) === null && !session) return false;
    this.access.check(request, expressResponse(ctx), "notifications:read");
    return true;
  }

  @Get("/problems/:code")
  @Tags(API_TAGS.problems)
  @Summary("What an error code means and what to do about it (the `type` of every problem)")
  @Returns(200)
  @(Returns(404, ProblemModel).Description("No error has this code"))
  problem(@PathParams("code") code: string) {
    const entry = ERROR_CATALOGUE[code as ErrorCode];
    if (!entry) throw new AppError("not_found", `no error code "${code}"`);
    return {type: problemType(code as ErrorCode), code, status: entry.status, title: entry.title, advice: entry.advice};
  }

  @Get("/api/v1/openapi.json")
  @Hidden()
  openapi() {
    return openApiDocument();
  }
}
