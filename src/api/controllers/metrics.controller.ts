import {Controller, inject} from "@tsed/di";
import {Context} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Returns, Summary, Tags} from "@tsed/schema";
import {GatewayMetrics} from "../../ops/metrics/gateway-metrics.js";
import {Replication} from "../../ops/replication/replication.js";
import {EXPOSITION_CONTENT_TYPE} from "../../ops/metrics/exposition.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {Public} from "../auth/public.js";
import {expressResponse} from "../typed-tsed.js";

@Controller("/")
@Tags(API_TAGS.metrics)
@Public()
export class MetricsController {
  private readonly metrics = inject(GatewayMetrics);
  private readonly replication = inject(Replication);

  @Get("/metrics")
  @Summary("Prometheus metrics (text exposition format); no key, like /healthz and /readyz")
  @Description("Counts, lags and channel states only: no alert text, no recipient, no secret.")
  @(Returns(200, String).ContentType("text/plain"))
  async metricsText(@Context() ctx: PlatformContext): Promise<void> {
    expressResponse(ctx)
      .status(200)
      .type(EXPOSITION_CONTENT_TYPE)
      .send((await this.metrics.render()) + this.replication.exposition());
  }
}
