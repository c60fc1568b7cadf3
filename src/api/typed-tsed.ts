import type {PlatformContext} from "@tsed/platform-http";
import {useDecorators} from "@tsed/core";
import type {Request, Response} from "express";

// Ts.ED's untyped corners, typed once for every route. It types a context's request and response
// as `any` because it serves several platforms; this gateway runs on Express only.

/** The Express request behind a Ts.ED context. */
export function expressRequest(ctx: PlatformContext): Request {
  return ctx.getRequest<Request>();
}

/** The Express response behind a Ts.ED context. */
export function expressResponse(ctx: PlatformContext): Response {
  return ctx.getResponse<Response>();
}

/**
 * Ts.ED's `useDecorators` returns `any`; ours go on controller methods only. The parts are
 * `unknown` because Ts.ED types its own decorators variously (MethodDecorator, chainable
 * interfaces, a bare Function).
 */
export function combineMethodDecorators(...decorators: unknown[]): MethodDecorator {
  return useDecorators(...decorators) as MethodDecorator;
}
