import {randomInt} from "node:crypto";

/**
 * The `attempt`-th candidate for a new reply code. Four digits are easy to type; once many are
 * in use the candidates grow longer.
 */
export function candidateCode(attempt: number): string {
  const digits = attempt < 20 ? 4 : attempt < 40 ? 6 : 8;
  return String(randomInt(10 ** (digits - 1), 10 ** digits));
}
