// The GSM 7-bit default alphabet and its extension table (3GPP TS 23.038 §6.2.1), and the packing
// of septets into octets (§6.1.2.1.1). Pure: PDU-mode SMS is written and read with these.

// Index = septet value. 0x1B is the escape to the extension table, never a character of its own.
const DEFAULT_ALPHABET =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";

// The escape septet: the next septet is read in the extension table.
const GSM7_ESCAPE = 0x1b;

// Extension table: septet after the escape → character. 0x0A (page break) reads as a form feed.
const EXTENSION: Record<number, string> = {
  0x0a: "\f",
  0x14: "^",
  0x28: "{",
  0x29: "}",
  0x2f: "\\",
  0x3c: "[",
  0x3d: "~",
  0x3e: "]",
  0x40: "|",
  0x65: "€"
};

const BASIC_SEPTET = new Map<string, number>();
for (let septet = 0; septet < DEFAULT_ALPHABET.length; septet += 1)
  if (septet !== GSM7_ESCAPE) BASIC_SEPTET.set(DEFAULT_ALPHABET[septet], septet);
const EXTENSION_SEPTET = new Map<string, number>(Object.entries(EXTENSION).map(([septet, char]) => [char, +septet]));

// The septets of one character: one from the default table, two (escape + code) from the
// extension table; null if neither has it.
function gsm7SeptetsOf(char: string): number[] | null {
  const basic = BASIC_SEPTET.get(char);
  if (basic !== undefined) return [basic];
  const extension = EXTENSION_SEPTET.get(char);
  return extension === undefined ? null : [GSM7_ESCAPE, extension];
}

/** True when every character of `text` is in the default alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const char of text) if (gsm7SeptetsOf(char) === null) return false;
  return true;
}

/** The septets of `text`; throws RangeError for a character outside the GSM alphabet. */
export function toGsm7Septets(text: string): number[] {
  const septets: number[] = [];
  for (const char of text) {
    const own = gsm7SeptetsOf(char);
    if (own === null) throw new RangeError(`not in the GSM 7-bit alphabet: ${JSON.stringify(char)}`);
    septets.push(...own);
  }
  return septets;
}

/**
 * Text from septets. An escape followed by a code the extension table lacks reads as the default
 * table's character for that code (23.038 asks receivers to do so); a lone escape at the end is dropped.
 */
export function fromGsm7Septets(septets: readonly number[]): string {
  let text = "";
  for (let i = 0; i < septets.length; i += 1) {
    if (septets[i] !== GSM7_ESCAPE) {
      text += DEFAULT_ALPHABET[septets[i]];
      continue;
    }
    i += 1;
    if (i < septets.length) text += EXTENSION[septets[i]] ?? DEFAULT_ALPHABET[septets[i]];
  }
  return text;
}

/**
 * Packs septets into octets, least significant bits first. `fillBits` zero bits come first, so
 * that the septets after a user data header start on a septet boundary (23.040 §9.2.3.24).
 */
export function packSeptets(septets: readonly number[], fillBits = 0): Uint8Array {
  const octets = new Uint8Array(Math.ceil((septets.length * 7 + fillBits) / 8));
  let bit = fillBits;
  for (const septet of septets) {
    for (let i = 0; i < 7; i += 1, bit += 1) if (septet & (1 << i)) octets[bit >> 3] |= 1 << (bit & 7);
  }
  return octets;
}

/** The inverse of packSeptets: `count` septets after `fillBits` bits; throws RangeError when the octets run short. */
export function unpackSeptets(octets: Uint8Array, count: number, fillBits = 0): number[] {
  if (fillBits + count * 7 > octets.length * 8) throw new RangeError("user data shorter than its length says");
  const septets: number[] = [];
  let bit = fillBits;
  for (let n = 0; n < count; n += 1) {
    let septet = 0;
    for (let i = 0; i < 7; i += 1, bit += 1) if (octets[bit >> 3] & (1 << (bit & 7))) septet |= 1 << i;
    septets.push(septet);
  }
  return septets;
}
