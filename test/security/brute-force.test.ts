import {afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {signDelivery} from "../../src/lib/webhook-signing.js";

const FAILURES_PER_MINUTE = 9;
const SIGN_INS_PER_MINUTE = 3;
const DASHBOARD_PASSWORD = "correct horse battery staple";

let gw: TestGateway;
let integrationEvents: string;
// The limiters measure time on this clock: every test starts with full buckets, and none sleeps.
const clock = new ManualClock(Date.UTC(2026, 10, 22, 8, 0, 0));

beforeAll(async () => {
  gw = await startTestGateway(
    {
      rate_limit: {per_second: 50, burst: 200, auth_failures_per_minute: FAILURES_PER_MINUTE},
      dashboard: {session_hours: 12, sign_in_attempts_per_minute: SIGN_INS_PER_MINUTE}
    },
    {clock}
  );
  const recipient = await createRecipient(gw);
  const integration = await gw.call("POST", "/api/v1/integrations", {
    body: {name: "plc", kind: "generic", target: recipient}
  });
  integrationEvents = `/api/v1/integrations/${integration.body.id}/events`;
  expect(
    (
      await gw.call("POST", "/dashboard/api/password", {
        key: null,
        body: {admin_key: gw.adminKey, password: DASHBOARD_PASSWORD}
      })
    ).status
  ).toBe(204);
});
beforeEach(() => clock.advance(3600_000));
afterAll(() => gw?.stop());

function expectThrottled(answer: {status: number; headers: Headers; body: any}, what: string) {
  expect(answer.status, what).toBe(429);
  expect(answer.body.code).toBe("rate_limited");
  expect(Number(answer.headers.get("retry-after")), what).toBeGreaterThanOrEqual(1);
}

describe("guessing credentials from one address", () => {
  it("spends one budget on wrong keys, forged integration signatures and unknown ping tokens, then answers 429 to everything", async () => {
    const event = {alert_id: "a", action: "fire", title: "t"};
    const guesses = [
      ...[1, 2, 3].map(
        (n) => () => gw.call("GET", "/api/v1/notifications", {key: `klx_guess00${n}_${"x".repeat(40)}`})
      ),
      ...[1, 2, 3].map((n) => () => {
        const forged = {
          ...signDelivery(
            {secret: `whsec_${Buffer.alloc(32, n).toString("base64")}`},
            `msg_${n}`,
            clock.now(),
            JSON.stringify(event)
          )
        };
        return gw.call("POST", integrationEvents, {key: null, body: event, headers: forged});
      }),
      ...[1, 2, 3].map((n) => () => gw.call("GET", `/ping/hb_guessed_token_${n}0000000000`, {key: null}))
    ];
    expect(guesses).toHaveLength(FAILURES_PER_MINUTE);
    const statuses = [];
    const budgets = [];
    for (const guess of guesses) {
      const answer = await guess();
      statuses.push(answer.status);
      expect(answer.headers.get("ratelimit-policy")).toBe(`"failed-auth-per-address";q=${FAILURES_PER_MINUTE};w=60`);
      budgets.push(answer.headers.get("ratelimit"));
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 404, 404, 404]);
    // Each refusal shows how many failures the address has left, counting down to none.
    expect(budgets.map((header) => Number(/;r=(\d+);/.exec(header ?? "")?.[1]))).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0]);

    // Past the budget every new guess is refused, on every path; a valid credential still passes
    // (keys, tokens and secrets are long random values: the answer to a guess tells nothing useful).
    const throttled = await gw.call("GET", "/api/v1/notifications", {key: `klx_guess004_${"x".repeat(40)}`});
    expectThrottled(throttled, "another wrong key");
    expect(throttled.headers.get("ratelimit")).toMatch(/^"failed-auth-per-address";r=0;t=\d+$/);
    expect((await gw.call("GET", "/api/v1/notifications")).status, "the admin key").toBe(200);
    expectThrottled(await gw.call("POST", integrationEvents, {key: null, body: event}), "an unsigned event");
    expectThrottled(await gw.call("GET", "/ping/hb_guessed_token_40000000000", {key: null}), "a ping token");
    // A guess already made is no new guess: it counts against itself and keeps its clear answer.
    const repeated = await gw.call("GET", "/ping/hb_guessed_token_10000000000", {key: null});
    expect(repeated.status).toBe(404);
    expect(repeated.headers.get("ratelimit")).toMatch(/^"failed-auth-per-credential";r=\d+;t=\d+$/);

    clock.advance(60_000);
    expect((await gw.call("GET", "/ping/hb_guessed_token_40000000000", {key: null})).status).toBe(404);
  });

  it("does not count successful authentications against the address", async () => {
    for (let i = 0; i < FAILURES_PER_MINUTE * 3; i++)
      expect((await gw.call("GET", "/api/v1/notifications")).status).toBe(200);
  });
});

describe("guessing the dashboard password", () => {
  it("answers 429 with Retry-After once the attempts per minute are spent, even to the right password", async () => {
    const statuses = [];
    for (let i = 0; i < SIGN_INS_PER_MINUTE; i++)
      statuses.push(
        (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: `guess number ${i}`}})).status
      );
    expect(statuses).toEqual(Array(SIGN_INS_PER_MINUTE).fill(401));
    expectThrottled(
      await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: DASHBOARD_PASSWORD}}),
      "the right password"
    );
    // Resetting the password with a guessed admin key spends the same attempts.
    expectThrottled(
      await gw.call("POST", "/dashboard/api/password", {
        key: null,
        body: {admin_key: `klx_guess005_${"x".repeat(40)}`, password: "a brand new password"}
      }),
      "a password reset"
    );

    clock.advance(60_000);
    expect(
      (await gw.call("POST", "/dashboard/api/sign-in", {key: null, body: {password: DASHBOARD_PASSWORD}})).status
    ).toBe(200);
  });
});
