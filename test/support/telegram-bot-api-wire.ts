import type {IncomingMessage, ServerResponse} from "node:http";

/** The fake bot, as getMe and every message's `from` show it. */
export const BOT = {
  id: 777000,
  is_bot: true,
  first_name: "Klaxon",
  username: "klaxon_test_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false
};

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// The Bot API takes parameters as a query string, urlencoded or multipart form, or JSON.
export async function parseParams(
  request: IncomingMessage,
  body: Buffer
): Promise<{params: Record<string, any>; voice: Buffer | null}> {
  const url = new URL(request.url ?? "/", "http://fake");
  const params: Record<string, any> = Object.fromEntries(url.searchParams);
  const type = request.headers["content-type"] ?? "";
  let voice: Buffer | null = null;
  if (type.startsWith("application/json")) Object.assign(params, JSON.parse(body.toString("utf8") || "{}"));
  if (type.startsWith("multipart/form-data") || type.startsWith("application/x-www-form-urlencoded")) {
    const form = await new Response(body, {headers: {"content-type": type}}).formData();
    for (const [key, value] of form) {
      if (typeof value === "string") params[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
      else voice = Buffer.from(await value.arrayBuffer());
    }
  }
  return {params, voice};
}

// A response the client already gave up on (or the fake dropped) gets nothing.
function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.writableEnded || response.destroyed) return;
  response.writeHead(status, {"Content-Type": "application/json"}).end(JSON.stringify(body));
}

/** The Bot API's success envelope. */
export function ok(response: ServerResponse, result: unknown): void {
  send(response, 200, {ok: true, result});
}

/** The Bot API's error envelope, with `parameters.retry_after` when the error is a flood wait. */
export function fail(response: ServerResponse, code: number, description: string, retryAfter?: number): void {
  send(response, code, {
    ok: false,
    error_code: code,
    description,
    ...(retryAfter === undefined ? {} : {parameters: {retry_after: retryAfter}})
  });
}
