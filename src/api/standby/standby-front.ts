import {createServer, type Server} from "node:http";
import type {AddressInfo} from "node:net";
import type {Settings} from "../../settings/defaults.js";
import type {Logger} from "../../lib/logger.js";
import {AppError} from "../../services/shared/errors.js";
import {answerWithProblem} from "../errors/problem.js";
import {writeJson} from "../http/write-json.js";
import {listenBacklog, listenWithBacklog} from "../connections/listen-backlog.js";

const RETRY_AFTER_SECONDS = 5;

/** What a standby says about itself on /healthz and /readyz. */
export interface StandbyState {
  role: "standby";
  box: string;
  /** The epoch of the newest beacon in the followed copy; null before the first. */
  epoch: number | null;
  /** How old that beacon is, in seconds: the replication lag as this box sees it; null before the first. */
  lag_seconds: number | null;
  /** The box that wrote it. */
  active_box: string | null;
  /** How long the active's /healthz has not answered, in seconds. */
  active_silent_seconds: number;
}

export interface StandbyFront {
  url: string;
  close(): Promise<void>;
}

/**
 * The standby's HTTP face, on the address the gateway will serve from once it takes over: /healthz
 * and /readyz say it is the standby and how far behind its copy is; every other route answers 503
 * `standby` with Retry-After and a Link to the active box, so a client that knows both boxes moves on.
 */
export async function openStandbyFront(
  settings: Settings,
  state: () => StandbyState,
  logger: Logger
): Promise<StandbyFront> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method === "GET" && (path === "/healthz" || path === "/readyz")) {
      const current = state();
      writeJson(
        response,
        200,
        path === "/healthz" ? {status: "ok", ...current} : {status: "standby", replication: current}
      );
      return;
    }
    response.setHeader("Link", `<${settings.replication.peer}>; rel="active"`);
    const detail = `this box (${state().box}) is the standby; the active box is ${settings.replication.peer}`;
    answerWithProblem(
      {request, response},
      path,
      new AppError("standby", detail, {retryAfterSeconds: RETRY_AFTER_SECONDS}),
      logger
    );
  });
  await listenWithBacklog(server, settings.host, settings.port, listenBacklog());
  const {port} = server.address() as AddressInfo;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })
  };
}
