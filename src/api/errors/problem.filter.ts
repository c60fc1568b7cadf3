import {Catch, ResourceNotFound, type ExceptionFilterMethods} from "@tsed/platform-exceptions";
import {Platform, type PlatformContext} from "@tsed/platform-http";
import {Exception} from "@tsed/exceptions";
import {inject} from "@tsed/di";
import {Runtime} from "../runtime.js";
import {AppError} from "../../services/shared/errors.js";
import {RouteMethods} from "../http/route-methods.js";
import {answerWithProblem} from "./problem.js";
import {expressRequest, expressResponse} from "../typed-tsed.js";

/** Every error, of any origin, leaves as application/problem+json; stack traces only reach the log. */
@Catch(Error, Exception)
export class ProblemFilter implements ExceptionFilterMethods {
  private readonly runtime = inject(Runtime);
  private readonly platform = inject(Platform);
  /** Built on the first unmatched request: the routes are all registered by then. */
  private routeMethods: RouteMethods | null = null;

  catch(error: unknown, ctx: PlatformContext): void {
    const request = expressRequest(ctx);
    const path = request.originalUrl.split("?")[0];
    answerWithProblem(
      {request, response: expressResponse(ctx)},
      path,
      this.wrongMethod(error, request.method, path) ?? error,
      this.runtime.logger
    );
  }

  /** No route matched, but the path is served with other methods: 405 with `Allow`, not 404. */
  private wrongMethod(error: unknown, method: string | undefined, path: string): AppError | null {
    if (!(error instanceof ResourceNotFound)) return null;
    this.routeMethods ??= new RouteMethods(
      this.platform
        .getLayers()
        .filter((layer) => layer.isProvider())
        .map((layer) => ({method: layer.method, path: String(layer.path)}))
    );
    const allowed = this.routeMethods.allowedOn(path);
    if (allowed.length === 0) return null;
    const allow = allowed.join(", ");
    return new AppError(
      "method_not_allowed",
      `${method ?? "this method"} is not served on ${path}; it serves ${allow}`,
      {headers: {Allow: allow}}
    );
  }
}
