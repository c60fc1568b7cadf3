/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same kill moments, the same
 * load mix and the same peer behaviour, so a failing run can be replayed with its printed seed.
 * (The gateway's own timing still varies between runs; the seed fixes what the suite decides.)
 */
export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /**
   * An independent stream derived from this seed and a number. Whatever draws a timing-dependent
   * number of values (the load's clients) gets its own stream, so the draws of the others (kill
   * moments) stay the same on a replay.
   */
  fork(stream: number): SeededRandom;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => {
      if (items.length === 0) throw new Error("nothing to pick from");
      return items[Math.floor(next() * items.length)];
    },
    fork: (stream) => seededRandom(Math.imul(seed ^ Math.imul(stream + 1, 0x9e3779b9), 0x85ebca6b) >>> 0)
  };
}

/** The seed from `KLAXON_CRASH_SEED` when replaying, else a fresh one. */
export function crashSeed(fromEnvironment: string | undefined): number {
  if (fromEnvironment === undefined || fromEnvironment === "") return Math.floor(Math.random() * 2 ** 32);
  const seed = Number(fromEnvironment);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new Error(`KLAXON_CRASH_SEED must be an integer in [0, 2^32): ${fromEnvironment}`);
  return seed;
}
