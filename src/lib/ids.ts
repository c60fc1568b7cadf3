import {randomFillSync} from "node:crypto";

// Crockford base32: URL-safe, no ambiguous letters, and lexicographic order equals numeric order,
// so ids sort by creation time (the ULID layout: 10 chars of milliseconds, 16 of randomness).
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

// Random bytes are drawn a pool at a time: one call into the system's generator per 256 ids
// rather than one per millisecond of a burst.
const pool = new Uint8Array(RANDOM_CHARS * 256);
let poolOffset = pool.length;

let lastMs = -1;
let timePart = "";
/** The random part of the last token, one base32 digit (0-31) per character. */
const random = new Uint8Array(RANDOM_CHARS);

function encodeTime(ms: number): string {
  let out = "";
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function drawRandom(): void {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) random[i] = pool[poolOffset + i] % 32;
  poolOffset += RANDOM_CHARS;
}

// Within one millisecond the random part is incremented, so ids made in a burst still sort in
// the order they were made (ULID's monotonic mode).
function increment(): void {
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    if (random[i] < 31) {
      random[i]++;
      return;
    }
    random[i] = 0;
  }
}

/** A 26-character, time-sortable, URL-safe token. */
export function sortableToken(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    timePart = encodeTime(ms);
    drawRandom();
  } else {
    increment();
  }
  let out = timePart;
  for (let i = 0; i < RANDOM_CHARS; i++) out += ALPHABET[random[i]];
  return out;
}

export type IdPrefix = "notif" | "esc" | "evt" | "att" | "whk" | "int" | "hb" | "ovr" | "test";

export function newId(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${sortableToken(ms)}`;
}
