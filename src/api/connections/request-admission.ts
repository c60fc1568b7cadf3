import type {NextFunction, Request, Response} from "express";
import type {Logger} from "../../lib/logger.js";
import {AppError} from "../../services/shared/errors.js";

/**
 * What a device refused for overload is told to wait. Short: a slot frees as soon as any request
 * in progress is answered, which takes milliseconds; long enough that a storm's retries do not
 * come back before the queue has moved.
 */
export const OVERLOAD_RETRY_AFTER_SECONDS = 2;

// The probes an operator and the unit's watchdog read to see the overload: never refused for it.
const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

/** Whether a request is one of the probes that overload never refuses or holds back. */
export function isProbe(url: string | undefined): boolean {
  const path = url ?? "/";
  const query = path.indexOf("?");
  return PROBES.has(query === -1 ? path : path.slice(0, query));
}

/**
 * Bounds the requests the gateway works on at once (from their headers to their answer, so a
 * body still arriving counts). One over the bound is answered 503 `overloaded` with Retry-After
 * before anything of it is read or done: the journal never sees it, and the device, told to retry,
 * keeps the alert. Without the bound a storm beyond what the box can take queued without limit
 * and every device's wait grew with it (docs/benchmarks.md, "Storm on one core").
 * Refusals are not each logged through the request log: one line per refusal would cost the most
 * exactly when the gateway has the least to spare; one warning is logged per burst instead.
 */
export function admitRequests(limit: number, logger: Logger) {
  let inFlight = 0;
  let refusedSinceWarning = 0;
  const detail = `the gateway is working on ${limit} requests, the most it holds at once; nothing of this request was done: send it again after ${OVERLOAD_RETRY_AFTER_SECONDS} s`;

  // One listener shared by every request: "close" comes once per response, after its answer
  // or when the client went away first (a closure per request was a measurable share of the
  // garbage under load).
  const release = () => {
    inFlight--;
    if (inFlight === 0 && refusedSinceWarning > 0) {
      logger.warn("overload over", {refused: refusedSinceWarning});
      refusedSinceWarning = 0;
    }
  };

  return (request: Request, response: Response, next: NextFunction) => {
    if (inFlight >= limit && !isProbe(request.url)) {
      if (refusedSinceWarning++ === 0)
        logger.warn("overloaded: refusing requests with 503 and Retry-After", {max_requests_in_flight: limit});
      return next(new AppError("overloaded", detail, {retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS}));
    }
    inFlight++;
    response.on("close", release);
    next();
  };
}
