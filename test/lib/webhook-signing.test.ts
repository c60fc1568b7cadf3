import {afterEach, describe, expect, it, vi} from "vitest";
import {Webhook} from "standardwebhooks";
import {activeSecrets, newWebhookSecret, signatureOf, signDelivery} from "../../src/lib/webhook-signing.js";
import {backoffMs, nextAttemptAt, retryAfterMs, GIVE_UP_AFTER_MS} from "../../src/lib/retry-policy.js";

// PROTOCOLS.md section 6, checked there against standardwebhooks 1.1.1 and openssl.
const VECTOR = {
  secret: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
  id: "msg_2f1c0e7e",
  timestamp: 1700000000,
  body: `{"type":"alert.acknowledged","alert_id":"a1","by":"alice"}`,
  signature: "v1,iZMcFRoiPvr+M7j0g4x82zI/6DnySY+DjiUzRM+aPHA="
};

afterEach(() => vi.useRealTimers());

const at = (seconds: number) => vi.useFakeTimers({toFake: ["Date"], now: seconds * 1000});

describe("webhook signing", () => {
  it("matches the Standard Webhooks test vector", () => {
    expect(signatureOf(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    const headers = signDelivery({secret: VECTOR.secret}, VECTOR.id, VECTOR.timestamp * 1000 + 999, VECTOR.body);
    expect(headers).toEqual({
      "webhook-id": VECTOR.id,
      "webhook-timestamp": "1700000000",
      "webhook-signature": VECTOR.signature,
      "X-Service-Signature": VECTOR.signature
    });
  });

  it("is accepted by the stock verifier within 5 minutes and refused after", () => {
    const headers = signDelivery({secret: VECTOR.secret}, VECTOR.id, VECTOR.timestamp * 1000, VECTOR.body);
    at(VECTOR.timestamp + 10);
    expect(new Webhook(VECTOR.secret).verify(VECTOR.body, headers)).toEqual(JSON.parse(VECTOR.body));
    at(VECTOR.timestamp + 301);
    expect(() => new Webhook(VECTOR.secret).verify(VECTOR.body, headers)).toThrow("Message timestamp too old");
  });

  it("issues whsec_ secrets of 32 random bytes", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it("signs with both secrets during a rotation, so either verifies, and with the new one only afterwards", () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const rotation = {
      secret: newSecret,
      previous_secret: oldSecret,
      previous_secret_expires_at: new Date((VECTOR.timestamp + 3600) * 1000).toISOString()
    };
    const during = signDelivery(rotation, VECTOR.id, VECTOR.timestamp * 1000, VECTOR.body);
    expect(during["webhook-signature"].split(" ")).toHaveLength(2);
    expect(during["X-Service-Signature"]).toBe(during["webhook-signature"]);
    at(VECTOR.timestamp);
    for (const secret of [oldSecret, newSecret]) expect(new Webhook(secret).verify(VECTOR.body, during)).toBeTruthy();

    const afterMs = (VECTOR.timestamp + 3600) * 1000;
    expect(activeSecrets(rotation, afterMs)).toEqual([newSecret]);
    const after = signDelivery(rotation, VECTOR.id, afterMs, VECTOR.body);
    at(VECTOR.timestamp + 3600);
    expect(new Webhook(newSecret).verify(VECTOR.body, after)).toBeTruthy();
    expect(() => new Webhook(oldSecret).verify(VECTOR.body, after)).toThrow("No matching signature found");
  });
});

describe("retry policy", () => {
  const middle = () => 0.5;

  it("backs off about 10 s, 1 min, 5 min, 30 min, then hourly, with ±10% jitter", () => {
    expect([1, 2, 3, 4, 5, 40].map((attempt) => backoffMs(attempt, middle))).toEqual([
      10_000, 60_000, 300_000, 1_800_000, 3_600_000, 3_600_000
    ]);
    expect(backoffMs(1, () => 0)).toBe(9_000);
    expect(backoffMs(1, () => 0.999999)).toBe(11_000);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 12);
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });

  it("never comes back sooner than Retry-After asks, and gives up past 72 hours", () => {
    const createdMs = 0;
    expect(nextAttemptAt({attempt: 1, nowMs: 0, createdMs, retryAfterMs: 600_000, random: middle})).toBe(600_000);
    expect(nextAttemptAt({attempt: 3, nowMs: 0, createdMs, retryAfterMs: 5_000, random: middle})).toBe(300_000);
    expect(
      nextAttemptAt({attempt: 70, nowMs: GIVE_UP_AFTER_MS - 3_600_000, createdMs, retryAfterMs: null, random: middle})
    ).toBe(GIVE_UP_AFTER_MS);
    expect(
      nextAttemptAt({attempt: 70, nowMs: GIVE_UP_AFTER_MS - 3_599_999, createdMs, retryAfterMs: null, random: middle})
    ).toBeNull();
  });
});
