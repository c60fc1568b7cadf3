import type {PlatformContext} from "@tsed/platform-http";
import {combineMethodDecorators, expressResponse} from "../typed-tsed.js";
import {Returns} from "@tsed/schema";
import {ProblemModel} from "../models/problem.model.js";
import {writeJson, type JsonAnswer} from "./write-json.js";

/** Documents what any endpoint taking a JSON body can answer before its own logic runs. */
export function JsonBody() {
  return combineMethodDecorators(
    Returns(400, ProblemModel).Description("Malformed JSON or an invalid field"),
    Returns(413, ProblemModel).Description("Body over 64 KiB"),
    Returns(415, ProblemModel).Description("Body is not JSON")
  );
}

/** 201 Created with a Location header, for every create endpoint. */
export function created<T>(ctx: PlatformContext, location: string, body: T): T {
  expressResponse(ctx).setHeader("Location", location);
  ctx.response.status(201);
  return body;
}

/**
 * An answer whose status and headers a service decided (`JsonAnswer`): they are set on the
 * response and the body is returned, for Ts.ED to write as it writes every route's model.
 */
export function answer(ctx: PlatformContext, {status, headers, body}: JsonAnswer): unknown {
  const response = expressResponse(ctx);
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  ctx.response.status(status);
  return body;
}

/** 204 No Content, for deletes. */
export function noContent(ctx: PlatformContext): void {
  ctx.response.status(204);
}

/**
 * Writes a JSON answer whose status is decided at run time. It bypasses Ts.ED's response
 * serializer, which maps a body through the model declared for the status and fails on others.
 */
export function sendJson(ctx: PlatformContext, status: number, body: unknown): void {
  writeJson(expressResponse(ctx), status, body);
}
