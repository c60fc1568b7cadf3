import {fromGsm7Septets, isGsm7, packSeptets, toGsm7Septets, unpackSeptets} from "../../src/modem/sms-gsm7.js";

// The simulated network's side of PDU mode: it reads the SMS-SUBMITs the code under test writes
// and writes the SMS-DELIVERs and SMS-STATUS-REPORTs it reads. The field layouts (addresses, time
// stamps, headers, first octets) are written here again from 23.040 on purpose, so a mistake in
// the code under test is not mirrored; only the GSM alphabet's septets are shared, and those are
// pinned by the standard's vectors in test/modem/sms-pdu.test.ts.

/** One SMS-SUBMIT as the network sees it. */
export interface SubmittedPdu {
  number: string;
  text: string;
  encoding: "gsm7" | "ucs2";
  statusReportRequested: boolean;
  /** Reference, total and sequence of a concatenated message's part. */
  part: {reference: number; total: number; sequence: number} | null;
}

const hex = (octets: number[]) => octets.map((octet) => octet.toString(16).toUpperCase().padStart(2, "0")).join("");

/** Reads what AT+CMGS carried; throws (the modem answers +CMS ERROR: 304) when it is not a well-formed SUBMIT. */
export function readSubmit(pduHex: string, tpduLength: number): SubmittedPdu {
  const octets = [...Buffer.from(pduHex, "hex")];
  const tpdu = octets.slice(1 + octets[0]);
  if (tpdu.length !== tpduLength) throw new Error(`length ${tpduLength} but the TPDU has ${tpdu.length} octets`);
  let at = 0;
  const next = () => {
    if (at >= tpdu.length) throw new Error("SUBMIT cut short");
    return tpdu[at++];
  };
  const first = next();
  if ((first & 0x03) !== 0x01) throw new Error("not an SMS-SUBMIT");
  next();
  const digits = next();
  const international = next() === 0x91;
  let number = "";
  for (let i = 0; i < Math.ceil(digits / 2); i += 1) {
    const octet = next();
    number += String(octet & 0x0f) + (octet >> 4 === 0x0f ? "" : String(octet >> 4));
  }
  next();
  const dcs = next();
  const validityFormat = (first >> 3) & 0x03;
  at += validityFormat === 0x02 ? 1 : validityFormat === 0 ? 0 : 7;
  const length = next();
  const userData = tpdu.slice(at);
  const headerOctets = first & 0x40 ? userData[0] + 1 : 0;
  const header = userData.slice(1, headerOctets);
  const part = header[0] === 0x00 ? {reference: header[2], total: header[3], sequence: header[4]} : null;
  const encoding = dcs === 0x08 ? "ucs2" : "gsm7";
  let text: string;
  if (encoding === "gsm7") {
    const headerSeptets = Math.ceil((headerOctets * 8) / 7);
    text = fromGsm7Septets(unpackSeptets(Uint8Array.from(userData), length).slice(headerSeptets));
  } else {
    text = Buffer.from(userData.slice(headerOctets, length)).swap16().toString("utf16le");
  }
  return {
    number: (international ? "+" : "") + number,
    text,
    encoding,
    statusReportRequested: (first & 0x20) !== 0,
    part
  };
}

/** What the simulated SIM holds in one slot. */
export interface SimulatedStoredSms {
  sender: string;
  text: string;
  /** Part of a concatenated message: carried in the PDU's header (text mode cannot show it). */
  part?: {reference: number; total: number; sequence: number};
  /** Listed as it is instead of a PDU built from the fields: a message nothing can read. */
  rawPdu?: string;
}

function address(number: string): number[] {
  if (/^\+?[0-9]+$/.test(number)) {
    const digits = number.replace("+", "");
    const padded = digits.length % 2 ? `${digits}F` : digits;
    const octets = [digits.length, number.startsWith("+") ? 0x91 : 0x81];
    for (let i = 0; i < padded.length; i += 2) octets.push(parseInt(padded[i + 1] + padded[i], 16));
    return octets;
  }
  const packed = [...packSeptets(toGsm7Septets(number))];
  return [Math.ceil((number.length * 7) / 4), 0xd0, ...packed];
}

// 22 Nov 2026 10:00:00 at UTC+1 (4 quarter hours), as the text-mode listing says too.
const SCTS = [0x62, 0x11, 0x22, 0x01, 0x00, 0x00, 0x40];

/** The SMS-DELIVER a modem lists for `sms`, service centre address included, and its TPDU length. */
export function deliverPdu(sms: SimulatedStoredSms): {pdu: string; tpduLength: number} {
  if (sms.rawPdu !== undefined) return {pdu: sms.rawPdu, tpduLength: Math.max(0, sms.rawPdu.length / 2 - 1)};
  const gsm = isGsm7(sms.text);
  const header = sms.part ? [0x05, 0x00, 0x03, sms.part.reference, sms.part.total, sms.part.sequence] : [];
  let userData: number[];
  let length: number;
  if (gsm) {
    const headerSeptets = Math.ceil((header.length * 8) / 7);
    const septets = toGsm7Septets(sms.text);
    userData = [...header, ...packSeptets(septets, headerSeptets * 7 - header.length * 8)];
    length = headerSeptets + septets.length;
  } else {
    userData = [...header, ...Buffer.from(sms.text, "utf16le").swap16()];
    length = userData.length;
  }
  const first = 0x04 | (sms.part ? 0x40 : 0);
  const tpdu = [first, ...address(sms.sender), 0x00, gsm ? 0x00 : 0x08, ...SCTS, length, ...userData];
  return {pdu: `07919471000000F0${hex(tpdu)}`, tpduLength: tpdu.length};
}

/** The SMS-STATUS-REPORT the network sends for message `ref` to `number`, TP-Status `status`; TPDU only. */
export function statusReportPdu(ref: number, number: string, status: number): {pdu: string; tpduLength: number} {
  const tpdu = [0x06, ref, ...address(number || "0"), ...SCTS, ...SCTS, status];
  return {pdu: `00${hex(tpdu)}`, tpduLength: tpdu.length};
}
