import type {IncomingMessage, Server, ServerResponse} from "node:http";
import {Ajv, type ValidateFunction} from "ajv";
import type {InjectorService} from "@tsed/di";
import {compile, JsonParameterStore} from "@tsed/schema";
import type {Logger} from "../../lib/logger.js";
import type {NotificationsService, SendInput} from "../../services/notifications/notifications.service.js";
import type {ApiAccess} from "../auth/api-access.js";
import {answerWithProblem, refusedBody} from "../errors/problem.js";
import {NotificationsController} from "../controllers/notifications.controller.js";
import {BODY_LIMIT_BYTES, msSince, type RequestRecorder} from "../http/pipeline.js";
import {acceptAlert} from "../http/send-alert.js";
import {writeJson} from "../http/write-json.js";
import {requestIdOf} from "../http/request-id.js";

export const SEND_PATH = "/api/v1/notifications/send";
const PLAIN_JSON = /^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i;
const CONTENT_LENGTH = /^[1-9][0-9]{0,5}$/;
// What body-parser raises for a body that is not JSON: the problem catalogue knows it.
const NOT_JSON = {type: "entity.parse.failed"};

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface DirectSendParts {
  access: ApiAccess;
  notifications: NotificationsService;
  /** The compiled schema check Ts.ED runs on the route's body parameter (`sendBodyValidator`). */
  validate: ValidateFunction;
  record: RequestRecorder;
  logger: Logger;
}

/**
 * POST /api/v1/notifications/send served from node:http, ahead of Express and Ts.ED. Ingest is
 * the gateway's hot path, and the framework's work per request (context, router, parameter
 * pipes, body-parser) cost more CPU than the alert's durable commit (docs/benchmarks.md).
 *
 * Only plain requests come here: the exact path, an X-API-Key, a JSON body (UTF-8) with a
 * Content-Length of at most 64 KiB and no transfer or content encoding. Everything else (a
 * dashboard session, a missing key, chunked, compressed, empty or oversized bodies, a query
 * string, a body that is JSON but no object) takes the Ts.ED route, which stays the endpoint's
 * documented definition. Both run the same access check, the same compiled schema, the same send
 * logic and the same problem writer, in the same order: body, then key, then schema.
 */
export class DirectSendRoute {
  constructor(private readonly parts: DirectSendParts) {}

  /** Decided from the request line and headers alone, before any byte of the body is read. */
  takes(request: IncomingMessage): boolean {
    const {headers} = request;
    const length = headers["content-length"];
    return (
      request.method === "POST" &&
      request.url === SEND_PATH &&
      typeof headers["x-api-key"] === "string" &&
      PLAIN_JSON.test(headers["content-type"] ?? "") &&
      length !== undefined &&
      CONTENT_LENGTH.test(length) &&
      Number(length) <= BODY_LIMIT_BYTES &&
      headers["transfer-encoding"] === undefined &&
      (headers["content-encoding"] ?? "identity").toLowerCase() === "identity"
    );
  }

  async serve(request: IncomingMessage, response: ServerResponse, framework: Handler): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(request);
    response.setHeader("x-request-id", requestId);
    const rawBody = await readBody(request);
    if (rawBody === null) return; // the client hung up: nobody to answer, nothing stored
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString("utf8").replace(/^\uFEFF/, ""));
    } catch {
      body = NOT_JSON;
    }
    if (body !== NOT_JSON && (body === null || typeof body !== "object" || Array.isArray(body))) {
      // Rare and an error either way: the framework words it, from the body read here.
      Object.assign(request, {body, rawBody});
      return framework(request, response);
    }
    let keyId: string | undefined;
    response.on("finish", () =>
      this.parts.record({method: "POST", path: SEND_PATH, route: SEND_PATH, status: response.statusCode, ms: msSince(started), keyId, requestId})
    );
    try {
      if (body === NOT_JSON) throw NOT_JSON;
      const access = this.parts.access.check(request, response, "notifications:send");
      keyId = access.principal.id;
      if (!this.parts.validate(body)) throw refusedBody(this.parts.validate.errors ?? []);
      // node:http joins repeated headers of these names into one string.
      const prefer = request.headers.prefer as string | undefined;
      const idempotencyKey = request.headers["idempotency-key"] as string | undefined;
      const answer = await acceptAlert(this.parts.notifications, {body: body as SendInput, rawBody, prefer, idempotencyKey, access});
      for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
      writeJson(response, answer.status, answer.body);
    } catch (error) {
      answerWithProblem(request, response, SEND_PATH, error, this.parts.logger);
    }
  }

  /** A failure while answering (the problem writer itself failed): logged, and the connection closed rather than left hanging. */
  failed(response: ServerResponse, error: unknown): void {
    this.parts.logger.error("direct send route failed", {error: error as Error});
    response.destroy();
  }
}

/** The whole body, or null if the client went away before sending it. */
function readBody(request: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("close", () => resolve(null));
  });
}

/** The validator Ts.ED compiled for the send route's body parameter: one schema, one set of messages. */
export function sendBodyValidator(injector: InjectorService): ValidateFunction {
  const parameter = JsonParameterStore.getParams(NotificationsController, "send").find((store) => store.paramType === "BODY");
  if (!parameter) throw new Error("NotificationsController.send has no body parameter");
  // Ts.ED's own Ajv instance (its options, formats and keywords) and the schema its validation pipe compiles.
  return injector.get<Ajv>(Ajv)!.compile(compile(parameter, {customKeys: true}));
}

/** Puts the direct route in front of the server's request handler (the Express application). */
export function serveSendDirectly(server: Server, route: DirectSendRoute): void {
  const [framework] = server.listeners("request") as Handler[];
  server.removeAllListeners("request");
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (route.takes(request)) void route.serve(request, response, framework).catch((error) => route.failed(response, error));
    else framework(request, response);
  });
}
