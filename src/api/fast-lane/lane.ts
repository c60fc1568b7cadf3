import type {IncomingMessage, Server, ServerResponse} from "node:http";
import {parse as parseQuery} from "node:querystring";
import {StoreSet, type Type} from "@tsed/core";
import type {InjectorService} from "@tsed/di";
import {ParamTypes, PlatformParams} from "@tsed/platform-params";
import {getOperationsRoutes, type JsonMethodStore} from "@tsed/schema";
import type {Logger} from "../../lib/logger.js";
import {callerKeyId} from "../auth/api-access.js";
import {isRouteGuard, type RouteGuard} from "../auth/route-guard.js";
import {answerWithProblem} from "../errors/problem.js";
import {msSince, readBody, type RequestRecorder} from "../http/pipeline.js";
import {requestIdOf} from "../http/request-id.js";
import {templatePattern} from "../http/route-methods.js";

const LANE = "klaxon:lane";

/**
 * Declares a route hot enough to be served from node:http ahead of Express (the lane), besides
 * its Ts.ED route. The controller method stays the route's only definition: the lane takes its
 * path and method from the route's metadata, runs the guards its `UseAuth` declared, and builds
 * its arguments with Ts.ED's own parameter pipes (parse, validate, map). So a lane route may take
 * only what both ways in can give: body, path, query and header parameters and the node:http
 * request and response (`@Req() request: IncomingMessage`, `@Res() response: ServerResponse`),
 * and must write its own answer (`writeAnswer`). `laneRoutes` refuses any other at start-up.
 */
export function Lane(): MethodDecorator {
  return StoreSet(LANE, true) as MethodDecorator;
}

// What Ts.ED's parameter pipes can read off the lane's request view (see `serve`).
const LANE_PARAM_TYPES = new Set<string>([
  ParamTypes.BODY,
  ParamTypes.PATH,
  ParamTypes.QUERY,
  ParamTypes.HEADER,
  ParamTypes.NODE_REQUEST,
  ParamTypes.NODE_RESPONSE
]);

type Invoke = (scope: {$ctx: never}) => Promise<unknown>;

/** A route the lane serves, derived from its controller's metadata. */
export interface LaneRoute {
  method: string;
  /** The Express template, as the request log and metric name it. */
  template: string;
  pattern: RegExp;
  names: string[];
  endpoint: JsonMethodStore;
  guards: RouteGuard[];
  invoke: Invoke;
}

function laneRoute(
  token: Type,
  endpoint: JsonMethodStore,
  method: string,
  template: string,
  injector: InjectorService
): LaneRoute {
  const name = `${token.name}.${String(endpoint.propertyKey)}`;
  const controller = injector.getProvider(token)?.middlewares;
  const unguarded = [
    controller?.use,
    controller?.useBefore,
    controller?.useAfter,
    endpoint.middlewares,
    endpoint.afterMiddlewares
  ];
  if (unguarded.some((list) => list?.length))
    throw new Error(`@Lane() ${name}: only the endpoint's UseAuth guards can run in the lane`);
  const guards = (endpoint.beforeMiddlewares as Type[]).map((middleware) => {
    const guard = injector.get<unknown>(middleware);
    if (!isRouteGuard(guard)) throw new Error(`@Lane() ${name}: its middleware ${middleware.name} is no RouteGuard`);
    return guard;
  });
  for (const parameter of endpoint.parameters) {
    if (!LANE_PARAM_TYPES.has(String(parameter.paramType)))
      throw new Error(
        `@Lane() ${name}: parameter ${parameter.index} is ${parameter.paramType}, which the lane cannot give`
      );
  }
  const invoke: Invoke = injector
    .get<PlatformParams>(PlatformParams)
    .compileHandler({token, propertyKey: endpoint.propertyKey});
  return {
    method,
    template,
    pattern: templatePattern(template),
    names: template.match(/:\w+/g)?.map((part) => part.slice(1)) ?? [],
    endpoint,
    guards,
    invoke
  };
}

/** Every `@Lane()` route of these controllers, from their public route metadata (`getOperationsRoutes`). */
export function laneRoutes(controllers: Type[], injector: InjectorService): LaneRoute[] {
  return controllers.flatMap((token) =>
    getOperationsRoutes(token)
      .filter((route) => route.endpoint.get(LANE) === true)
      .map((route) => laneRoute(token, route.endpoint, route.method.toUpperCase(), String(route.fullPath), injector))
  );
}

interface Matched {
  route: LaneRoute;
  path: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Serves the `@Lane()` routes from node:http, ahead of Express and Ts.ED: ingest is the gateway's
 * hot path, and the framework's own work per request (context, router, middleware chain) cost
 * three times the lane's CPU per alert (docs/benchmarks.md). Everything else a request meets is
 * shared with the framework's way in: the request id (`requestIdOf`), the body pipeline
 * (`readBody`: the same body-parser steps Express runs), the guards, Ts.ED's parameter pipes, the
 * route's own method, the problem writer and the request recorder.
 */
export class LaneServer {
  constructor(
    private readonly routes: LaneRoute[],
    private readonly record: RequestRecorder,
    private readonly logger: Logger
  ) {}

  /** "METHOD template" of each route served. */
  routeNames(): string[] {
    return this.routes.map((route) => `${route.method} ${route.template}`);
  }

  /** The lane route a request is for, from its request line alone; null leaves it to the framework. */
  match(request: IncomingMessage): Matched | null {
    const url = request.url ?? "";
    const queryAt = url.indexOf("?");
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    for (const route of this.routes) {
      if (route.method !== request.method) continue;
      const found = route.pattern.exec(path);
      if (!found) continue;
      try {
        // Express 5 decodes path parameters the same way; one it cannot decode is its 400 to word.
        const params = Object.fromEntries(
          route.names.map((name, index) => [name, decodeURIComponent(found[index + 1])])
        );
        // Express 5's default ("simple") query parser is node's querystring.
        return {route, path, params, query: queryAt < 0 ? {} : {...parseQuery(url.slice(queryAt + 1))}};
      } catch {
        return null;
      }
    }
    return null;
  }

  async serve(
    request: IncomingMessage,
    response: ServerResponse,
    {route, path, params, query}: Matched
  ): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(request);
    response.setHeader("x-request-id", requestId);
    response.on("finish", () =>
      this.record({
        method: route.method,
        path,
        route: route.template,
        status: response.statusCode,
        ms: msSince(started),
        keyId: callerKeyId(request),
        requestId
      })
    );
    try {
      await readBody(request, response);
      for (const guard of route.guards) guard.admit(request, response, {endpoint: route.endpoint, params, query});
      // The data paths Ts.ED's parameter pipes read (`$ctx.request.body`, `.params`, `.query`,
      // `.headers`, and `.req`/`.res` for the node:http request and response): no more.
      const $ctx = {
        request: {body: (request as {body?: unknown}).body, params, query, headers: request.headers, req: request},
        response: {res: response}
      };
      await route.invoke({$ctx: $ctx as never});
      if (!response.writableEnded) throw new Error(`${route.method} ${route.template} ended without an answer`);
    } catch (error) {
      answerWithProblem(request, response, path, error, this.logger);
    }
  }

  /** A failure while answering (the problem writer itself failed): logged, and the connection closed rather than left hanging. */
  failed(response: ServerResponse, error: unknown): void {
    this.logger.error("lane route failed", {error: error as Error});
    response.destroy();
  }
}

/** Puts the lane in front of the server's request handler (the Express application). */
export function serveLane(server: Server, lane: LaneServer): void {
  const [framework] = server.listeners("request") as Handler[];
  server.removeAllListeners("request");
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const matched = lane.match(request);
    if (matched) void lane.serve(request, response, matched).catch((error) => lane.failed(response, error));
    else framework(request, response);
  });
}
