// The fields PDUs are built from (3GPP TS 23.040 §9.1.2): hex, semi-octet addresses, the
// service centre time stamp, and a reader that refuses to run past the end.

import {fromGsm7Septets, unpackSeptets} from "./sms-gsm7.js";

/** A PDU that cannot be read completely: truncated, malformed, or of a kind we do not take. */
export class PduError extends Error {
  override name = "PduError";
}

/** Where a part belongs: parts with the same sender, reference and total make one message. */
export interface Concatenation {
  /** 0-255 for an 8-bit reference, 0-65535 for a 16-bit one. */
  reference: number;
  total: number;
  /** 1-based. */
  sequence: number;
}

export function hexToBytes(hex: string): Uint8Array {
  const clean = hex.trim();
  if (clean.length % 2 !== 0 || !/^[0-9A-Fa-f]*$/.test(clean)) throw new PduError("not a hex PDU");
  return Uint8Array.from(Buffer.from(clean, "hex"));
}

export function bytesToHex(bytes: ArrayLike<number>): string {
  return Buffer.from(Uint8Array.from(bytes)).toString("hex").toUpperCase();
}

/** Reads octets in order; throws PduError instead of reading past the end. */
export class OctetReader {
  private position = 0;

  constructor(private readonly octets: Uint8Array) {}

  get remaining(): number {
    return this.octets.length - this.position;
  }

  byte(): number {
    if (this.position >= this.octets.length) throw new PduError("PDU cut short");
    return this.octets[this.position++];
  }

  take(count: number): Uint8Array {
    if (this.position + count > this.octets.length) throw new PduError("PDU cut short");
    const slice = this.octets.subarray(this.position, this.position + count);
    this.position += count;
    return slice;
  }

  skip(count: number): void {
    this.take(count);
  }

  rest(): Uint8Array {
    return this.take(this.remaining);
  }
}

// Semi-octet digits beyond 0-9 (24.008 §10.5.4.7): * # a b c; F pads an odd count.
const SEMI_OCTET_DIGITS = "0123456789*#abc";

/** Destination address of an SMS-SUBMIT: digit count, type (145 international, 129 otherwise), swapped BCD. */
export function addressField(number: string): number[] {
  const digits = number.replace(/^\+/, "");
  if (!/^[0-9]{1,20}$/.test(digits)) throw new RangeError("an SMS address is digits with an optional leading +");
  const octets = [digits.length, number.startsWith("+") ? 0x91 : 0x81];
  const padded = digits.length % 2 ? `${digits}F` : digits;
  for (let i = 0; i < padded.length; i += 2) octets.push(parseInt(padded[i + 1] + padded[i], 16));
  return octets;
}

/** An originating or recipient address: digits (+ when international), or alphanumeric text. */
export function readAddress(reader: OctetReader): string {
  const semiOctets = reader.byte();
  const type = reader.byte();
  const octets = reader.take(Math.ceil(semiOctets / 2));
  const numbering = (type >> 4) & 0x07;
  // Type of number 101: alphanumeric, GSM 7-bit packed in the semi-octets.
  if (numbering === 0x05) return fromGsm7Septets(unpackSeptets(octets, Math.floor((semiOctets * 4) / 7)));
  let digits = "";
  for (const octet of octets) {
    for (const nibble of [octet & 0x0f, octet >> 4]) {
      if (digits.length === semiOctets) break;
      const digit = SEMI_OCTET_DIGITS[nibble];
      if (digit === undefined) throw new PduError("filler inside an address");
      digits += digit;
    }
  }
  return numbering === 0x01 ? `+${digits}` : digits;
}

/** TP-SCTS / TP-DT: seven swapped BCD octets with the zone in quarter hours; the time in UTC, ISO. */
export function readTimestamp(reader: OctetReader): string {
  const octets = reader.take(7);
  const bcd = (octet: number) => {
    const [tens, units] = [octet & 0x0f, octet >> 4];
    if (tens > 9 || units > 9) throw new PduError("time stamp digit out of range");
    return tens * 10 + units;
  };
  const [year, month, day, hour, minute, second] = Array.from(octets.subarray(0, 6), bcd);
  // Bit 3 of the zone octet is its sign; the rest is swapped BCD like the other fields.
  const zone = octets[6];
  const quarters = (zone & 0x07) * 10 + (zone >> 4);
  const offsetMinutes = (zone & 0x08 ? -quarters : quarters) * 15;
  // Two-digit years: 90-99 are the 1990s (old examples and test networks), the rest this century.
  const local = Date.UTC((year >= 90 ? 1900 : 2000) + year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  if (
    month < 1 ||
    month > 12 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    minute > 59 ||
    second > 59
  )
    throw new PduError("time stamp is not a valid time");
  return new Date(local - offsetMinutes * 60_000).toISOString();
}
