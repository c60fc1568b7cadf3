import {describe, expect, it} from "vitest";
import {newId, sortableToken} from "../../src/lib/ids.js";

const TOKEN = /^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{26}$/;

describe("sortable ids", () => {
  it("sort in the order they were made, within one millisecond and across many", () => {
    const made: string[] = [];
    // 600 milliseconds of 5 ids each: more than one pool of random bytes is drawn.
    for (let ms = Date.UTC(2026, 10, 25); made.length < 3000; ms += made.length % 5 === 4 ? 1 : 0)
      made.push(sortableToken(ms));
    expect(made.every((token) => TOKEN.test(token))).toBe(true);
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
  });

  it("carry the time they were made in their first ten characters, and fresh randomness each millisecond", () => {
    const ms = Date.UTC(2026, 10, 25, 12, 0, 0, 1);
    const a = sortableToken(ms);
    const b = sortableToken(ms + 1);
    expect(
      parseInt([...a.slice(0, 10)].map((c) => "0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(c).toString(32)).join(""), 32)
    ).toBe(ms);
    // Not one incremented from the other: a new millisecond draws new random characters.
    expect(a.slice(10, 24)).not.toBe(b.slice(10, 24));
  });

  it("carry over when the random part's last character is at its end, and keep the prefix", () => {
    const ms = Date.UTC(2026, 10, 25, 13);
    const tokens = Array.from({length: 40}, () => sortableToken(ms));
    // 40 increments always pass through a last character of Z (31) once and carry into the one before it.
    const carried = tokens.findIndex((token, i) => i > 0 && token.at(-1) === "0" && tokens[i - 1].at(-1) === "Z");
    expect(carried).toBeGreaterThan(0);
    expect(tokens[carried].slice(0, 25) > tokens[carried - 1].slice(0, 25)).toBe(true);
    expect(newId("notif", ms)).toMatch(/^notif_[0-9A-Z]{26}$/);
  });
});
