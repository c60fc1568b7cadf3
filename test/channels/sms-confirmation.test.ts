import {describe, expect, it} from "vitest";
import {confirmParts} from "../../src/channels/sms/sms-confirmation.js";
import type {SmsDeliveryReport} from "../../src/modem/sms-status-reports.js";

const DELIVERED: SmsDeliveryReport = {
  outcome: "delivered",
  detail: "the network reports the SMS received by the phone (TP-Status 0)"
};
const FAILED: SmsDeliveryReport = {
  outcome: "failed",
  detail: "the network gave up delivering the SMS: phone busy (TP-Status 97)"
};
const never = new Promise<SmsDeliveryReport | null>(() => {});

describe("confirmParts", () => {
  it("is delivered once every part is", async () => {
    expect(
      await confirmParts([Promise.resolve(DELIVERED), Promise.resolve(DELIVERED)], new AbortController().signal)
    ).toEqual({outcome: "delivered", detail: `all 2 parts: ${DELIVERED.detail}`});
    expect(await confirmParts([Promise.resolve(DELIVERED)], new AbortController().signal)).toEqual(DELIVERED);
  });

  it("fails as soon as one part failed, without waiting for the others", async () => {
    expect(
      await confirmParts([Promise.resolve(DELIVERED), Promise.resolve(FAILED), never], new AbortController().signal)
    ).toEqual({outcome: "failed", detail: `part 2 of 3: ${FAILED.detail}`});
  });

  it("is null when a part had no report", async () => {
    expect(
      await confirmParts([Promise.resolve(DELIVERED), Promise.resolve(null)], new AbortController().signal)
    ).toBeNull();
  });

  it("is null at once when stopped, before or while waiting", async () => {
    const running = new AbortController();
    const waiting = confirmParts([never], running.signal);
    running.abort();
    expect(await waiting).toBeNull();
    expect(await confirmParts([never], running.signal)).toBeNull();
  });
});
