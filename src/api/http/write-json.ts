import type {ServerResponse} from "node:http";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/**
 * Writes a whole JSON answer on node:http, with the headers Express's `res.json` would send
 * (ETags are off): every JSON answer, Ts.ED's or the lane's, leaves through here.
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

/** A JSON answer decided at run time: what a route hands to `writeAnswer`. */
export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Writes a route's answer the same way whichever way in the request took. */
export function writeAnswer(response: ServerResponse, answer: JsonAnswer): void {
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  writeJson(response, answer.status, answer.body);
}
