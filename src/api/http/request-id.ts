import {randomUUID} from "node:crypto";
import type {IncomingMessage} from "node:http";

/**
 * A request's id, as the client sees it in X-Request-Id and the log line carries it: the
 * client's own X-Request-Id, or a fresh one. One definition for both ways in: Ts.ED builds its
 * context's id with it (`logger.reqIdBuilder` in server.ts) and the send route's fast lane calls it.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return (typeof given === "string" && given) || randomUUID().replaceAll("-", "");
}
