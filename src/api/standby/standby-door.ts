import type {NextFunction, Request, Response} from "express";
import {AppError} from "../../services/shared/errors.js";

const RETRY_AFTER_SECONDS = 5;
/** The routes a standby answers itself, by GET; everything else is the active's. */
const STANDBY_ROUTES = new Set(["/healthz", "/readyz"]);

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

/** A tail (what this box accepted as the active and never shipped) that has not come home yet. */
export interface TailWaiting {
  /** Former journals still to hand over. */
  waiting: number;
  /** Failed attempts so far, and the last one's reason: the active cannot be reached, or refuses. */
  failures: number;
  last_failure: string | null;
}

/**
 * A standby box as its HTTP door sees it: where the active is, and its own state read at each
 * request. Given to Ts.ED as a ready value; its presence makes the one door a standby's.
 */
export class StandbyStatus {
  /** The active box's base URL (replication.peer). */
  readonly peer: string;
  readonly state: () => StandbyState;
  /** The tail still waiting to come home, or null when none is. */
  readonly tail: () => TailWaiting | null;

  constructor(deps: {peer: string; state: () => StandbyState; tail?: () => TailWaiting | null}) {
    ({peer: this.peer, state: this.state} = deps);
    this.tail = deps.tail ?? (() => null);
  }
}

/**
 * The standby's gate, ahead of the router and the body pipeline: GET /healthz and /readyz go on to
 * their controller; every other request, of any method and path, is refused with 503 `standby`,
 * Retry-After and a Link to the active box (written by the one problem writer), so a client that
 * knows both boxes moves on without the standby reading its body.
 */
export function standbyGate(status: StandbyStatus) {
  return (request: Request, _response: Response, next: NextFunction) => {
    if (request.method === "GET" && STANDBY_ROUTES.has(request.path)) return next();
    const detail = `this box (${status.state().box}) is the standby; the active box is ${status.peer}`;
    next(
      new AppError("standby", detail, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        headers: {Link: `<${status.peer}>; rel="active"`}
      })
    );
  };
}
