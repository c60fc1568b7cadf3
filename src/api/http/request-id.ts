import {randomUUID} from "node:crypto";
import type {IncomingMessage} from "node:http";

// What a client's own id may be: enough for UUIDs, trace ids and "host:seq" forms, nothing that
// can break a log line or a header, and short enough that echoing and logging it costs nothing.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's id, as the client sees it in X-Request-Id and the log line carries it: the
 * client's own X-Request-Id when it is up to 128 characters of `[A-Za-z0-9._:-]`, else a fresh
 * one. Ts.ED builds each request context's id with it (`logger.reqIdBuilder` in server.ts).
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && CLIENT_REQUEST_ID.test(given) ? given : randomUUID().replaceAll("-", "");
}
