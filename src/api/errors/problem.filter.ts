import {Catch, type ExceptionFilterMethods} from "@tsed/platform-exceptions";
import type {PlatformContext} from "@tsed/platform-http";
import {Exception} from "@tsed/exceptions";
import {inject} from "@tsed/di";
import {Runtime} from "../runtime.js";
import {answerWithProblem} from "./problem.js";

/** Every error, of any origin, leaves as application/problem+json; stack traces only reach the log. */
@Catch(Error, Exception)
export class ProblemFilter implements ExceptionFilterMethods {
  private readonly runtime = inject(Runtime);

  catch(error: unknown, ctx: PlatformContext): void {
    const request = ctx.request.raw;
    answerWithProblem(request, ctx.response.raw, request.originalUrl.split("?")[0], error, this.runtime.logger);
  }
}
