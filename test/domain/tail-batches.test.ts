import {describe, expect, it} from "vitest";
import fc from "fast-check";
import {
  TAIL_BATCH_MAX_BYTES,
  TAIL_BATCH_MAX_ITEMS,
  tailBatches,
  type HandedNotification
} from "../../src/domain/tail.js";

/** The API's body limit for POST /api/v1/replication/tail, as for every JSON body. */
const BODY_LIMIT = 64 * 1024;
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

// Characters JSON writes at their worst (a control character is 6 bytes, "\u0001"), and ordinary ones.
const character = fc.constantFrom("a", "°", "\u0001", '"', "😀", "\\");
// "max" size: lengths spread up to the bound, not fast-check's usual few characters.
const text = (max: number) => fc.array(character, {maxLength: max, size: "max"}).map((chars) => chars.join(""));
const orNull = <T>(value: fc.Arbitrary<T>) => fc.option(value, {nil: null});

/** Notifications with every field up to its API bound, idempotency answers up to their 32,000 characters. */
const notification = (id: number): fc.Arbitrary<HandedNotification> =>
  fc
    .record({
      message: text(4000).map((message) => message || "m"),
      source: orNull(text(128)),
      dedup_key: orNull(text(255)),
      link: orNull(text(2048)),
      ack_note: orNull(text(1000)),
      idempotency: orNull(
        fc.record({
          api_key_id: fc.constant("k1"),
          key: text(255),
          fingerprint: fc.constant("f".repeat(64)),
          status: fc.constant(202),
          body: text(32_000),
          created_at: fc.constant("2026-11-28T10:00:00.000Z"),
          expires_at: fc.constant("2026-11-29T10:00:00.000Z")
        })
      )
    })
    .map((fields) => ({
      id: `notif_${String(id).padStart(20, "0")}`,
      recipient_uuid: "6f1c0000-0000-4000-8000-000000000001",
      priority: "critical",
      service: null,
      environment: null,
      created_at: "2026-11-28T10:00:00.000Z",
      status: "acknowledged",
      acknowledged_at: "2026-11-28T10:01:00.000Z",
      acknowledged_by: "b".repeat(128),
      acknowledged_via: "dashboard",
      resolved_at: null,
      api_key_id: "k1",
      ...fields
    }));

const tails = fc
  .integer({min: 0, max: 30})
  .chain((count) => fc.tuple(...Array.from({length: count}, (_, n) => notification(n))));

describe("the tail is cut into requests the new active takes", () => {
  it("keeps every notification in order, each request within the body limit and the item count, and drops a stored answer only from an alert that cannot fit with it", () => {
    fc.assert(
      fc.property(tails, (tail) => {
        const {batches, withoutIdempotency} = tailBatches(tail);
        expect(batches.flat().map((n) => n.id)).toEqual(tail.map((n) => n.id));
        for (const batch of batches) {
          expect(batch.length).toBeGreaterThan(0);
          expect(batch.length).toBeLessThanOrEqual(TAIL_BATCH_MAX_ITEMS);
          const request = {
            from_box: "b".repeat(128),
            hand_over: "\u0001".repeat(255),
            notifications: batch,
            last_batch: false
          };
          expect(bytes(request)).toBeLessThanOrEqual(BODY_LIMIT);
        }
        const tooLarge = tail.filter((n) => n.idempotency && bytes(n) > TAIL_BATCH_MAX_BYTES).map((n) => n.id);
        expect(withoutIdempotency).toEqual(tooLarge);
        for (const sent of batches.flat())
          expect(sent.idempotency).toEqual(
            tooLarge.includes(sent.id) ? null : tail.find((n) => n.id === sent.id)!.idempotency
          );
      }),
      // No shrinking: shrinking tails of 30 notifications of tens of KiB takes minutes, and the
      // first counterexample already names the broken rule.
      {numRuns: 60, endOnFailure: true}
    );
  });

  it("fits an alert with every field at its bound in JSON's worst escaping, once its stored answer is left behind", () => {
    const worst = fc.sample(notification(1), 1)[0];
    const filled: HandedNotification = {
      ...worst,
      message: "\u0001".repeat(4000),
      source: "\u0001".repeat(128),
      dedup_key: "\u0001".repeat(255),
      link: "\u0001".repeat(2048),
      service: "\u0001".repeat(128),
      environment: "\u0001".repeat(128),
      acknowledged_by: "\u0001".repeat(128),
      ack_note: "\u0001".repeat(1000),
      idempotency: {
        api_key_id: "k1",
        key: "k",
        fingerprint: "f".repeat(64),
        status: 202,
        body: "\u0001".repeat(32_000),
        created_at: "2026-11-28T10:00:00.000Z",
        expires_at: "2026-11-29T10:00:00.000Z"
      }
    };
    const {batches, withoutIdempotency} = tailBatches([filled]);
    expect(withoutIdempotency).toEqual([filled.id]);
    expect(bytes(batches[0][0])).toBeLessThanOrEqual(TAIL_BATCH_MAX_BYTES);
  });
});
