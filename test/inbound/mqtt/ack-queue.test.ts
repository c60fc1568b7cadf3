import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {AckQueue} from "../../../src/inbound/mqtt/ack-queue.js";

describe("AckQueue", () => {
  it("acknowledges in arrival order, each message once it and every earlier one have committed", () => {
    fc.assert(
      fc.property(
        fc
          .integer({min: 1, max: 60})
          .chain((count) =>
            fc.tuple(fc.constant(count), fc.shuffledSubarray([...Array(count).keys()], {minLength: count}))
          ),
        ([count, commitOrder]) => {
          const sent: number[] = [];
          const queue = new AckQueue((messageId) => sent.push(messageId));
          const settle = Array.from({length: count}, (_, index) => queue.add(index + 1));
          const committed = new Set<number>();
          for (const index of commitOrder) {
            settle[index]();
            committed.add(index);
            // Sent: exactly the longest prefix of arrivals that has committed.
            let prefix = 0;
            while (committed.has(prefix)) prefix++;
            expect(sent).toEqual(Array.from({length: prefix}, (_, position) => position + 1));
          }
          expect(queue.pending).toBe(0);
        }
      )
    );
  });

  it("forgets what a closed connection received: nothing is acknowledged after close", () => {
    const sent: number[] = [];
    const queue = new AckQueue((messageId) => sent.push(messageId));
    const first = queue.add(7);
    const second = queue.add(8);
    queue.close();
    first();
    second();
    expect(sent).toEqual([]);
  });
});
