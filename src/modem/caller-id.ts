/**
 * What a URC says about a call coming in: the ring (RING, +CRING), the caller's number (+CLIP,
 * null when withheld), or that the caller gave up before anyone answered (SIM800's MISSED_CALL).
 */
export type IncomingSignal = {kind: "ring"} | {kind: "caller"; number: string | null} | {kind: "gone"};

/** The incoming-call meaning of a URC, or null for any other line. */
export function parseIncomingSignal(line: string): IncomingSignal | null {
  if (line === "RING" || /^\+CRING:\s*VOICE/.test(line)) return {kind: "ring"};
  if (line.startsWith("MISSED_CALL:")) return {kind: "gone"};
  // +CLIP: "<number>",<type>[,...]: type 145 is international, whether or not the + is printed.
  const clip = /^\+CLIP:\s*"([^"]*)"\s*(?:,\s*(\d+))?/.exec(line);
  if (!clip) return null;
  const digits = clip[1].trim();
  if (digits === "") return {kind: "caller", number: null};
  return {kind: "caller", number: clip[2] === "145" && !digits.startsWith("+") ? `+${digits}` : digits};
}
