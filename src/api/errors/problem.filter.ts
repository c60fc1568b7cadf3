import {Catch, type ExceptionFilterMethods} from "@tsed/platform-exceptions";
import type {PlatformContext} from "@tsed/platform-http";
import {Exception} from "@tsed/exceptions";
import {inject} from "@tsed/di";
import {Runtime} from "../runtime.js";
import {toProblem} from "./problem.js";

/** Every error, of any origin, leaves as application/problem+json; stack traces only reach the log. */
@Catch(Error, Exception)
export class ProblemFilter implements ExceptionFilterMethods {
  private readonly runtime = inject(Runtime);

  catch(error: unknown, ctx: PlatformContext): void {
    const request = ctx.request.raw;
    const {problem, headers, unexpected} = toProblem(error, request.originalUrl.split("?")[0]);
    if (unexpected) {
      this.runtime.logger.error("request failed", {method: request.method, path: problem.instance, code: problem.code, error: error as Error, stack: (error as Error)?.stack});
    }
    const response = ctx.response.raw;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.status(problem.status).type("application/problem+json").send(JSON.stringify(problem));
  }
}
