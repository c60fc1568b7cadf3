import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Head, Post, Returns, Summary, Tags} from "@tsed/schema";
import {combineMethodDecorators, expressRequest, expressResponse} from "../typed-tsed.js";
import {HeartbeatsService, type PingKind} from "../../services/heartbeats/heartbeats.service.js";
import {AppError} from "../../services/shared/errors.js";
import {PingAnswerModel} from "../models/heartbeat.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {clientAddress, Runtime} from "../runtime.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {Public} from "../auth/public.js";

const PING_DESCRIPTION =
  "No API key: the unguessable token in the path is the credential. A POST may carry no body or a JSON body (which is ignored).";

/** GET, HEAD and POST on one path: devices use whichever their HTTP client makes easiest. */
function PingRoute(path: string, summary: string, description = PING_DESCRIPTION) {
  return combineMethodDecorators(
    Get(path),
    Head(path),
    Post(path),
    Summary(summary),
    Description(description),
    Returns(200, PingAnswerModel),
    Returns(404, ProblemModel).Description("No heartbeat has this token"),
    Returns(429, ProblemModel).Description(
      "Too many unknown tokens from this address (a valid token still passes); see Retry-After"
    )
  );
}

/** The exit code a failure's JSON body names, when it is a plausible one; the body is read by the pipeline, not checked. */
function exitCodeOf(body: unknown): number | undefined {
  const code = typeof body === "object" && body !== null ? (body as {exit_code?: unknown}).exit_code : undefined;
  return typeof code === "number" && Number.isInteger(code) && code >= 0 && code <= 255 ? code : undefined;
}

/** The keyless ping URLs of heartbeats (`ping_url`), for devices that cannot set headers. */
@Controller("/ping")
@Tags(API_TAGS.pings)
@Public()
export class PingController {
  private readonly heartbeats = inject(HeartbeatsService);
  private readonly runtime = inject(Runtime);

  @PingRoute("/:token", "Ping: the job ran, the device lives")
  ping(@PathParams("token") token: string, @Context() ctx: PlatformContext) {
    return this.signal(token, "ping", ctx);
  }

  @PingRoute("/:token/start", "A run started: it must finish (ping or fail) within the grace time")
  start(@PathParams("token") token: string, @Context() ctx: PlatformContext) {
    return this.signal(token, "start", ctx);
  }

  @PingRoute(
    "/:token/fail",
    "The job failed: the heartbeat goes down and pages at once",
    'No API key: the unguessable token in the path is the credential. A POST may carry `{"exit_code": N}` (an integer from 0 to 255, as `klaxon heartbeat <url> -- <command>` sends it), which the page names; any other body is ignored, so a failure is never refused for what it carries.'
  )
  fail(@PathParams("token") token: string, @Context() ctx: PlatformContext) {
    return this.signal(token, "fail", ctx, exitCodeOf(expressRequest(ctx).body));
  }

  // Guessing tokens counts against the address exactly like guessing API keys; a valid token always passes.
  private async signal(token: string, kind: PingKind, ctx: PlatformContext, exitCode?: number) {
    const answer = await this.heartbeats.pingByToken(token, kind, exitCode);
    if (!answer) {
      this.runtime.authenticationFailed(clientAddress(expressRequest(ctx)), token, expressResponse(ctx));
      throw new AppError("not_found", "no heartbeat has this ping URL");
    }
    return answer;
  }
}
