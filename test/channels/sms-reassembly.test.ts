import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {assembleMessages} from "../../src/channels/sms/sms-reassembly.js";
import type {WaitingSms} from "../../src/store/journal/inbound-sms.repository.js";

const T0 = Date.UTC(2026, 10, 22, 9);
const WAIT_MS = 600_000;

function sms(id: number, body: string, part: WaitingSms["part"] = null, sender = "+4915112345678"): WaitingSms {
  return {id, storedAt: new Date(T0 + id * 1000).toISOString(), sender, body, sentAt: null, part};
}

describe("assembleMessages", () => {
  it("hands on single messages at once, and a concatenated one only with every part, in sequence order", () => {
    const waiting = [
      sms(1, "y way", {reference: 7, total: 2, sequence: 2}),
      sms(2, "STATUS"),
      sms(3, "ACK 4821, on m", {reference: 7, total: 2, sequence: 1}),
      sms(4, "half of", {reference: 8, total: 2, sequence: 1})
    ];
    expect(assembleMessages(waiting, T0 + 5000, WAIT_MS)).toEqual([
      {
        ids: [1, 3],
        sender: "+4915112345678",
        text: "ACK 4821, on my way",
        receivedAt: new Date(T0 + 3000).toISOString()
      },
      {ids: [2], sender: "+4915112345678", text: "STATUS", receivedAt: new Date(T0 + 2000).toISOString()}
    ]);
  });

  it("keeps parts of different senders or references apart, counts a part that came twice once, and hands on what came after the wait", () => {
    const waiting = [
      sms(1, "A", {reference: 7, total: 2, sequence: 1}),
      sms(2, "A", {reference: 7, total: 2, sequence: 1}),
      sms(3, "B", {reference: 7, total: 2, sequence: 2}, "+4917000000000"),
      sms(4, "C", {reference: 9, total: 3, sequence: 3})
    ];
    expect(assembleMessages(waiting, T0 + 5000, WAIT_MS)).toEqual([]);
    expect(
      assembleMessages(waiting, T0 + 1000 + WAIT_MS, WAIT_MS).map((message) => [message.ids, message.text])
    ).toEqual([[[1, 2], "A"]]);
    expect(assembleMessages(waiting, T0 + 4000 + WAIT_MS, WAIT_MS).map((message) => message.text)).toEqual([
      "A",
      "B",
      "C"
    ]);
  });

  it("puts any split of a text back together, whatever order the parts are stored in", () => {
    fc.assert(
      fc.property(fc.array(fc.string({maxLength: 20}), {minLength: 1, maxLength: 6}), fc.integer(), (pieces, seed) => {
        const parts = pieces.map((body, index) => ({body, sequence: index + 1}));
        const shuffled = [...parts].sort(
          (a, b) => ((a.sequence * 7919 + seed) % 13) - ((b.sequence * 7919 + seed) % 13)
        );
        const waiting = shuffled.map((part, index) =>
          sms(index + 1, part.body, {reference: 3, total: parts.length, sequence: part.sequence})
        );
        expect(assembleMessages(waiting, T0, WAIT_MS).map((message) => message.text)).toEqual([pieces.join("")]);
      })
    );
  });
});
