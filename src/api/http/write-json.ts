import type {ServerResponse} from "node:http";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/**
 * Writes a whole JSON answer on node:http, with the headers Express's `res.json` would send
 * (ETags are off): for answers whose status is decided at run time (`sendJson`) and problems.
 */
export function writeJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  contentType = JSON_CONTENT_TYPE
): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader("Content-Type", contentType);
  response.setHeader("Content-Length", Buffer.byteLength(text));
  response.end(text);
}

/** A JSON answer decided at run time, status and headers included (`answer` in respond.ts). */
export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
