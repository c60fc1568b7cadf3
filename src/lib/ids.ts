import {randomBytes} from "node:crypto";

// Crockford base32: URL-safe, no ambiguous letters, and lexicographic order equals numeric order,
// so ids sort by creation time (the ULID layout: 10 chars of milliseconds, 16 of randomness).
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

let lastMs = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = "";
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function freshRandom(): number[] {
  return Array.from(randomBytes(RANDOM_CHARS), (byte) => byte % 32);
}

// Within one millisecond the random part is incremented, so ids made in a burst still sort in
// the order they were made (ULID's monotonic mode).
function nextRandom(ms: number): number[] {
  if (ms !== lastMs) {
    lastMs = ms;
    lastRandom = freshRandom();
    return lastRandom;
  }
  const next = [...lastRandom];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++;
      break;
    }
    next[i] = 0;
  }
  lastRandom = next;
  return next;
}

/** A 26-character, time-sortable, URL-safe token. */
export function sortableToken(ms: number): string {
  return encodeTime(ms) + nextRandom(ms).map((n) => ALPHABET[n]).join("");
}

export type IdPrefix = "notif" | "esc" | "evt" | "att" | "whk" | "int" | "hb";

export function newId(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${sortableToken(ms)}`;
}
