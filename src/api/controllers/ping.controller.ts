// Values, not types: Ts.ED reads a parameter's declared class to hand the node:http request and response.
import {IncomingMessage, ServerResponse} from "node:http";
import {Controller, inject} from "@tsed/di";
import {PathParams} from "@tsed/platform-params";
import {Req, Res} from "@tsed/platform-http";
import {Description, Get, Head, Post, Returns, Summary, Tags} from "@tsed/schema";
import {combineMethodDecorators} from "../typed-tsed.js";
import {HeartbeatsService, type PingKind} from "../../services/heartbeats/heartbeats.service.js";
import {AppError} from "../../services/shared/errors.js";
import {PingAnswerModel} from "../models/heartbeat.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {clientAddress, Runtime} from "../runtime.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {Public} from "../auth/public.js";
import {Lane} from "../fast-lane/lane.js";
import {writeAnswer} from "../http/write-json.js";

/** GET, HEAD and POST on one path: devices use whichever their HTTP client makes easiest. */
function PingRoute(path: string, summary: string) {
  return combineMethodDecorators(
    Get(path),
    Head(path),
    Post(path),
    Lane(),
    Summary(summary),
    Description(
      "No API key: the unguessable token in the path is the credential. A POST may carry no body or a JSON body (which is ignored)."
    ),
    Returns(200, PingAnswerModel),
    Returns(404, ProblemModel).Description("No heartbeat has this token"),
    Returns(429, ProblemModel).Description(
      "Too many unknown tokens from this address (a valid token still passes); see Retry-After"
    )
  );
}

/** The keyless ping URLs of heartbeats (`ping_url`), for devices that cannot set headers. */
@Controller("/ping")
@Tags(API_TAGS.pings)
@Public()
export class PingController {
  private readonly heartbeats = inject(HeartbeatsService);
  private readonly runtime = inject(Runtime);

  @PingRoute("/:token", "Ping: the job ran, the device lives")
  ping(@PathParams("token") token: string, @Req() request: IncomingMessage, @Res() response: ServerResponse) {
    return this.signal(token, "ping", request, response);
  }

  @PingRoute("/:token/start", "A run started: it must finish (ping or fail) within the grace time")
  start(@PathParams("token") token: string, @Req() request: IncomingMessage, @Res() response: ServerResponse) {
    return this.signal(token, "start", request, response);
  }

  @PingRoute("/:token/fail", "The job failed: the heartbeat goes down and pages at once")
  fail(@PathParams("token") token: string, @Req() request: IncomingMessage, @Res() response: ServerResponse) {
    return this.signal(token, "fail", request, response);
  }

  // Guessing tokens counts against the address exactly like guessing API keys; a valid token always passes.
  private async signal(
    token: string,
    kind: PingKind,
    request: IncomingMessage,
    response: ServerResponse
  ): Promise<void> {
    const answer = await this.heartbeats.pingByToken(token, kind);
    if (!answer) {
      this.runtime.authenticationFailed(clientAddress(request), token, response);
      throw new AppError("not_found", "no heartbeat has this ping URL");
    }
    writeAnswer(response, {status: 200, headers: {}, body: answer});
  }
}
