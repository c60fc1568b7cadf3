import type {IncomingMessage, ServerResponse} from "node:http";
import type {PlatformContext} from "@tsed/platform-http";
import {expressRequest} from "../typed-tsed.js";

/** The route a guard admits a request to: its declared metadata and the request's path and query values. */
export interface GuardedRoute {
  /** The endpoint's metadata store: the options its decorators declared (`UseAuth(Guard, options)`). */
  endpoint: {get<T>(key: unknown): T};
  params: Record<string, string>;
  query: Record<string, unknown>;
}

/**
 * An authentication middleware written on node:http types, so that both ways in run it: Ts.ED as
 * a `UseAuth` middleware (through `guardedRoute`), and the lane, which reads the same `UseAuth`
 * declaration off the endpoint. It throws to refuse and records who was admitted against the request.
 */
export interface RouteGuard {
  admit(request: IncomingMessage, response: ServerResponse, route: GuardedRoute): void;
}

export function isRouteGuard(candidate: unknown): candidate is RouteGuard {
  return typeof (candidate as Partial<RouteGuard> | undefined)?.admit === "function";
}

/** The route a Ts.ED middleware guards, as a `RouteGuard` reads it. */
export function guardedRoute(ctx: PlatformContext): GuardedRoute {
  const request = expressRequest(ctx);
  return {endpoint: ctx.endpoint, params: request.params as Record<string, string>, query: request.query};
}
