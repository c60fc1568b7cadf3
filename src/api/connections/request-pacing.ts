import type {NextFunction, Request, Response} from "express";
import {isProbe} from "./request-admission.js";

/**
 * Requests the door starts in one turn of the event loop. About 8 ms of one core's work at a
 * storm's 0.25 ms per alert: short enough that the turn comes round again quickly for what
 * needs several turns (a page's SMTP conversation, one round trip a turn; the accept of new
 * connections, one per listening socket a turn), long enough that a turn's fixed cost is spread.
 */
export const REQUESTS_STARTED_PER_TURN = 32;

/**
 * Paces the requests the door starts: at most `perTurn` in one turn of the event loop, the rest
 * started in later turns in the order they came (their headers are read; their work waits).
 * Without it one turn started every request that had arrived: in a storm of a thousand kept-alive
 * devices a turn took 150-300 ms, and whatever needed several turns waited that long for each, so
 * the first page's SMTP conversation took a second (docs/benchmarks.md, the storm). The total
 * work is the same; the turns are short. A request whose client has gone while it waited is not
 * started. The probes are never held back.
 */
export function paceRequests(perTurn = REQUESTS_STARTED_PER_TURN) {
  let startedThisTurn = 0;
  let turnMarked = false;
  const waiting: Array<{response: Response; next: NextFunction}> = [];

  // Runs in the check phase, after the turn's I/O; one scheduled there runs in the next turn's.
  const nextTurn = () => {
    turnMarked = false;
    startedThisTurn = 0;
    while (waiting.length > 0 && startedThisTurn < perTurn) {
      const {response, next} = waiting.shift()!;
      if (response.closed) continue;
      startedThisTurn++;
      next();
    }
    if (waiting.length > 0) markTurn();
  };
  const markTurn = () => {
    if (turnMarked) return;
    turnMarked = true;
    setImmediate(nextTurn);
  };

  return (request: Request, response: Response, next: NextFunction) => {
    if (isProbe(request.url)) return next();
    markTurn();
    if (waiting.length === 0 && startedThisTurn < perTurn) {
      startedThisTurn++;
      return next();
    }
    waiting.push({response, next});
  };
}
