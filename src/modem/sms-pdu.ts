// SMS in PDU mode (3GPP TS 23.040): SMS-SUBMIT written for AT+CMGS, SMS-DELIVER and
// SMS-STATUS-REPORT read from storage and +CDS. Pure functions over hex strings, so every field
// is pinned down by vectors and round trips; the AT side lives in modem-sms.ts.

import {fromGsm7Septets, isGsm7, packSeptets, toGsm7Septets, unpackSeptets} from "./sms-gsm7.js";
import {
  addressField,
  bytesToHex,
  hexToBytes,
  OctetReader,
  PduError,
  readAddress,
  readTimestamp,
  type Concatenation
} from "./sms-pdu-fields.js";

export {PduError, type Concatenation} from "./sms-pdu-fields.js";

/** GSM 7-bit (default alphabet and extension table) or UCS-2: the only two we write. */
export type PduEncoding = "gsm7" | "ucs2";

/** GSM-7 whenever every character has a septet (é, ü, £ and € do), UCS-2 only when one has none. */
export function pduEncodingFor(text: string): PduEncoding {
  return isGsm7(text) ? "gsm7" : "ucs2";
}

// One SMS carries 140 octets of user data: 160 septets or 70 UCS-2 units; a concatenation header
// (6 octets with the 8-bit reference) leaves 153 septets or 67 units.
const SINGLE_UNITS: Record<PduEncoding, number> = {gsm7: 160, ucs2: 70};
const PART_UNITS: Record<PduEncoding, number> = {gsm7: 153, ucs2: 67};

/** Units a character costs: septets (2 for the extension table) or UTF-16 units (2 for an emoji). */
function unitsOf(char: string, encoding: PduEncoding): number {
  return encoding === "gsm7" ? toGsm7Septets(char).length : char.length;
}

/**
 * The texts of the SMS that carry `text`: itself when it fits one, else parts that each fit one
 * beside a concatenation header. An escape pair or a surrogate pair is never split.
 */
export function segmentText(text: string, encoding: PduEncoding = pduEncodingFor(text)): string[] {
  const chars = Array.from(text);
  const total = chars.reduce((sum, char) => sum + unitsOf(char, encoding), 0);
  if (total <= SINGLE_UNITS[encoding]) return [text];
  const segments: string[] = [];
  let current = "";
  let used = 0;
  for (const char of chars) {
    const units = unitsOf(char, encoding);
    if (used + units > PART_UNITS[encoding]) {
      segments.push(current);
      current = "";
      used = 0;
    }
    current += char;
    used += units;
  }
  segments.push(current);
  return segments;
}

/** One SMS-SUBMIT ready for AT+CMGS: the hex with an empty service centre address, and the length CMGS wants. */
export interface SubmitPdu {
  /** `00` (the SIM's service centre) followed by the TPDU, in hex. */
  pdu: string;
  /** Octets of the TPDU alone: the argument of AT+CMGS in PDU mode. */
  tpduLength: number;
}

/** What one SMS-SUBMIT says. */
export interface SubmitFields {
  number: string;
  text: string;
  encoding: PduEncoding;
  /** TP-SRR: ask the network for a status report. */
  statusReport: boolean;
  /** TP-VP, relative format; 167 is one day. */
  validity?: number;
  /** Present for a part of a concatenated message. */
  concat?: Concatenation;
}

/** Encodes one SMS-SUBMIT; throws RangeError when the text does not fit one SMS. */
export function encodeSubmit(fields: SubmitFields): SubmitPdu {
  const {encoding, concat} = fields;
  const header = concat ? concatenationHeader(concat) : [];
  let userData: number[];
  let userDataLength: number;
  if (encoding === "gsm7") {
    const headerSeptets = Math.ceil((header.length * 8) / 7);
    const septets = toGsm7Septets(fields.text);
    userDataLength = headerSeptets + septets.length;
    if (userDataLength > 160) throw new RangeError(`${userDataLength} septets do not fit one SMS`);
    userData = [...header, ...packSeptets(septets, headerSeptets * 7 - header.length * 8)];
  } else {
    const text: number[] = [];
    for (let i = 0; i < fields.text.length; i += 1)
      text.push(fields.text.charCodeAt(i) >> 8, fields.text.charCodeAt(i) & 0xff);
    userData = [...header, ...text];
    userDataLength = userData.length;
    if (userDataLength > 140) throw new RangeError(`${userDataLength} octets do not fit one SMS`);
  }
  // SMS-SUBMIT (MTI 01), relative validity (VPF 10), TP-SRR and TP-UDHI as asked; TP-MR 0 (the modem numbers it).
  const firstOctet = 0x11 | (fields.statusReport ? 0x20 : 0) | (concat ? 0x40 : 0);
  const tpdu = [
    firstOctet,
    0x00,
    ...addressField(fields.number),
    0x00,
    encoding === "gsm7" ? 0x00 : 0x08,
    fields.validity ?? 167,
    userDataLength,
    ...userData
  ];
  return {pdu: `00${bytesToHex(tpdu)}`, tpduLength: tpdu.length};
}

// IEI 0 (8-bit reference): reference, total, sequence; preceded by the header length.
function concatenationHeader({reference, total, sequence}: Concatenation): number[] {
  return [0x05, 0x00, 0x03, reference & 0xff, total, sequence];
}

/** The SMS-SUBMITs for one message: one, or a concatenated series under `reference` (0-255). */
export function submitPdus(
  number: string,
  text: string,
  options: {statusReport: boolean; reference: number; validity?: number}
): SubmitPdu[] {
  const encoding = pduEncodingFor(text);
  const segments = segmentText(text, encoding);
  if (segments.length > 255) throw new RangeError("a concatenated SMS has at most 255 parts");
  return segments.map((segment, index) =>
    encodeSubmit({
      number,
      text: segment,
      encoding,
      statusReport: options.statusReport,
      validity: options.validity,
      concat:
        segments.length > 1 ? {reference: options.reference, total: segments.length, sequence: index + 1} : undefined
    })
  );
}

/** An SMS-DELIVER: a message someone sent us. */
export interface DeliverPdu {
  kind: "deliver";
  /** Digits with + for an international number, or the alphanumeric sender ("Klaxon"). */
  sender: string;
  text: string;
  /** TP-SCTS: when the service centre took the message, as an ISO time in UTC. */
  sentAt: string;
  concat: Concatenation | null;
}

/** An SMS-STATUS-REPORT: the network's word on a message we sent. */
export interface StatusReportPdu {
  kind: "status_report";
  messageRef: number;
  /** TP-Status, 0..255. */
  status: number;
  recipient: string;
}

/**
 * Reads a PDU as modems list it (AT+CMGL/CMGR, +CDS): service centre address first, unless
 * `tpduLength` says the hex holds the TPDU alone. Throws PduError for anything it cannot read
 * completely; an SMS-SUBMIT (our own, stored) is refused the same way.
 */
export function decodePdu(hex: string, tpduLength?: number): DeliverPdu | StatusReportPdu {
  const reader = new OctetReader(hexToBytes(hex));
  if (tpduLength === undefined || reader.remaining !== tpduLength) reader.skip(reader.byte());
  const firstOctet = reader.byte();
  const kind = firstOctet & 0x03;
  if (kind === 0x00) return decodeDeliver(reader, firstOctet);
  if (kind === 0x02) {
    const messageRef = reader.byte();
    const recipient = readAddress(reader);
    readTimestamp(reader);
    readTimestamp(reader);
    return {kind: "status_report", messageRef, recipient, status: reader.byte()};
  }
  throw new PduError(`not a message to us (TP-MTI ${kind})`);
}

function decodeDeliver(reader: OctetReader, firstOctet: number): DeliverPdu {
  const sender = readAddress(reader);
  reader.byte();
  const dcs = reader.byte();
  const sentAt = readTimestamp(reader);
  const userDataLength = reader.byte();
  const hasHeader = (firstOctet & 0x40) !== 0;
  const alphabet = alphabetOf(dcs);
  const userData = reader.rest();
  let concat: Concatenation | null = null;
  let headerOctets = 0;
  if (hasHeader) {
    if (userData.length === 0) throw new PduError("user data header missing");
    headerOctets = userData[0] + 1;
    if (headerOctets > userData.length) throw new PduError("user data header longer than the user data");
    concat = concatenationIn(userData.subarray(1, headerOctets));
  }
  let text: string;
  if (alphabet === "gsm7") {
    const headerSeptets = Math.ceil((headerOctets * 8) / 7);
    if (userDataLength < headerSeptets) throw new PduError("user data length shorter than its header");
    if (Math.ceil((userDataLength * 7) / 8) > userData.length)
      throw new PduError("user data shorter than its length says");
    const septets = unpackSeptets(userData, userDataLength, 0).slice(headerSeptets);
    text = fromGsm7Septets(septets);
  } else {
    if (userDataLength > userData.length) throw new PduError("user data shorter than its length says");
    const body = userData.subarray(headerOctets, userDataLength);
    if (alphabet === "ucs2") {
      if (body.length % 2 !== 0) throw new PduError("UCS-2 text with an odd number of octets");
      text = "";
      for (let i = 0; i < body.length; i += 2) text += String.fromCharCode((body[i] << 8) | body[i + 1]);
    } else {
      text = Buffer.from(body).toString("latin1");
    }
  }
  return {kind: "deliver", sender, text, sentAt, concat};
}

// 23.038 §4: the alphabet bits of the general and the message-waiting coding groups.
function alphabetOf(dcs: number): "gsm7" | "8bit" | "ucs2" {
  const group = dcs >> 4;
  if (group <= 0x07) {
    if (dcs & 0x20) throw new PduError("compressed text is not supported");
    return (["gsm7", "8bit", "ucs2", "gsm7"] as const)[(dcs >> 2) & 0x03];
  }
  if (group === 0x0c || group === 0x0d) return "gsm7";
  if (group === 0x0e) return "ucs2";
  if (group === 0x0f) return dcs & 0x04 ? "8bit" : "gsm7";
  throw new PduError(`reserved data coding scheme ${dcs}`);
}

// IEI 0 (8-bit reference) or 8 (16-bit reference); other elements are skipped, nonsense is ignored.
function concatenationIn(header: Uint8Array): Concatenation | null {
  for (let i = 0; i + 1 < header.length; i += 2 + header[i + 1]) {
    const [id, length] = [header[i], header[i + 1]];
    const data = header.subarray(i + 2, i + 2 + length);
    if (data.length !== length) throw new PduError("user data header element cut short");
    const concat =
      id === 0x00 && length === 3
        ? {reference: data[0], total: data[1], sequence: data[2]}
        : id === 0x08 && length === 4
          ? {reference: (data[0] << 8) | data[1], total: data[2], sequence: data[3]}
          : null;
    if (concat && concat.total >= 1 && concat.sequence >= 1 && concat.sequence <= concat.total) return concat;
  }
  return null;
}
