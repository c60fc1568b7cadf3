import {describe, expect, it} from "vitest";
import {toProblem} from "../../src/api/errors/problem.js";
import {AppError} from "../../src/services/shared/errors.js";
import {StorageUnavailableError} from "../../src/store/journal/journal.js";

// The HTTP suites cover every status a client can provoke; a bug cannot be provoked on demand,
// so the mapping of an unexpected error is checked here, on the function the filter uses.
describe("problem mapping", () => {
  it("turns an unexpected error into a 500 that reveals nothing about it", () => {
    const error = new TypeError("Cannot read properties of undefined (reading 'klx_secret')");
    const {problem, unexpected} = toProblem(error, "/api/v1/notifications/send");
    expect(problem).toEqual({
      type: "/problems/internal_error",
      title: "Internal error",
      status: 500,
      detail: "the gateway failed to process this request; nothing was stored for it",
      instance: "/api/v1/notifications/send",
      code: "internal_error"
    });
    expect(unexpected).toBe(true);
  });

  it("maps a storage failure to 503 with Retry-After", () => {
    const {problem, headers} = toProblem(new StorageUnavailableError(new Error("disk I/O error")), "/x");
    expect(problem.status).toBe(503);
    expect(headers["Retry-After"]).toBe("30");
  });

  it("carries a service error's Retry-After and field errors", () => {
    const {problem, headers, unexpected} = toProblem(
      new AppError("rate_limited", "slow down", {retryAfterSeconds: 7}),
      "/x"
    );
    expect(problem).toMatchObject({status: 429, code: "rate_limited", detail: "slow down"});
    expect(headers).toEqual({"Retry-After": "7"});
    expect(unexpected).toBe(false);
  });
});
