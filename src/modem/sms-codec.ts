// The pure half of SMS on the modem: which alphabet a text needs in text mode, how long it is in
// that alphabet, and how to read a storage listing in whatever form the modem wrote it (PDU, or
// text in the UCS-2 or IRA charset). Text-mode reading runs with AT+CSCS="UCS2" where the modem
// takes it, so every message body is one line of hex that can never look like OK, a URC or a
// second line.

import {decodePdu, PduError, type DeliverPdu, type StatusReportPdu} from "./sms-pdu.js";

/** GSM 03.38 alphabet used through AT+CSCS="IRA" (the modem converts), or UCS-2 as hex. */
export type SmsEncoding = "gsm7" | "ucs2";

/** Septets in one SMS without a user data header (GSM-7), UTF-16 units in one UCS-2 SMS. */
export const SINGLE_SMS_LIMIT: Record<SmsEncoding, number> = {gsm7: 160, ucs2: 70};

// Printable ASCII that the GSM default alphabet also has: everything but the backtick. Other
// GSM letters (é, ü, £) exist too, but the IRA-to-GSM conversion of non-ASCII bytes differs
// between firmwares, so anything outside ASCII goes as UCS-2: longer, never garbled.
const GSM7_SAFE = /^[\x20-\x5f\x61-\x7e]*$/;
// Characters of the GSM extension table: each costs an escape septet plus its own.
const GSM7_EXTENSION = /[\^{}\\[\]~|]/g;

export function smsEncodingFor(text: string): SmsEncoding {
  return GSM7_SAFE.test(text) ? "gsm7" : "ucs2";
}

/** Length in the units of the encoding's limit: septets for GSM-7, UTF-16 units for UCS-2. */
export function smsLength(text: string, encoding: SmsEncoding): number {
  return encoding === "gsm7" ? text.length + (text.match(GSM7_EXTENSION)?.length ?? 0) : text.length;
}

/**
 * The text as plain ASCII, for a modem that takes no DCS (AT+CSMP refused) and so sends only
 * its default alphabet: accents dropped (ü → u), anything else without an ASCII form as "?".
 * How firmware converts non-ASCII IRA bytes differs, so none are left to it.
 */
export function asciiFallback(text: string): string {
  return text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e\n]/gu, "?");
}

export function ucs2Hex(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i += 1) out += text.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0");
  return out;
}

/** Decodes UCS-2 hex; anything that is not (some modems print plain text anyway) comes back as it is. */
export function fromUcs2Hex(field: string): string {
  if (field.length === 0 || field.length % 4 !== 0 || !/^[0-9A-Fa-f]+$/.test(field)) return field;
  let out = "";
  for (let i = 0; i < field.length; i += 4) out += String.fromCharCode(parseInt(field.slice(i, i + 4), 16));
  return out;
}

/** A sender in UCS-2 mode is hex too, but a national number of 12 digits is also valid hex: keep what reads as a number. */
export function decodeSender(field: string): string {
  const decoded = fromUcs2Hex(field);
  return /^\+?[0-9]+$/.test(decoded) ? decoded : field;
}

/** A message someone sent us, as read from storage in either mode. */
export interface ReceivedSms extends Omit<DeliverPdu, "sentAt"> {
  /** When the service centre took it (ISO, UTC), if the modem said so readably. */
  sentAt: string | null;
}

/** One slot of the modem's message storage, whatever the modem put there. */
export interface StoredSms {
  index: number;
  /** The form the modem listed it in. */
  form: "pdu" | "text";
  /** The message exactly as listed: the PDU's hex, or the text-mode header line and body. */
  raw: string;
  /** What it says; null when it cannot be read, and then `problem` says why. */
  content: ReceivedSms | StatusReportPdu | null;
  problem: string | null;
}

/** The charset a text-mode listing was read in: UCS-2 hex fields, or the modem's plain text. */
export type ListingCharset = "UCS2" | "IRA";

/** `+CMTI: "SM",3` (a message) or `+CDSI: "SM",4` (a stored status report) → the index; null for any other line. */
export function parseCmti(line: string): number | null {
  const match = /^\+(?:CMTI|CDSI):\s*"[^"]*",\s*(\d+)/.exec(line);
  return match ? Number(match[1]) : null;
}

/** Fields of a header line: quoted strings unquoted, bare values as they are; commas inside quotes kept. */
export function headerFields(line: string): string[] {
  const body = line.slice(line.indexOf(":") + 1).trim();
  const fields: string[] = [];
  const pattern = /\s*(?:"([^"]*)"|([^,]*))\s*(?:,|$)/g;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(body)) !== null && match[0] !== "") fields.push(match[1] ?? match[2] ?? "");
  return fields;
}

/** `+CMGR: <stat>,...` followed by its body line; null for an empty slot. */
export function parseCmgr(index: number, lines: string[], charset: ListingCharset): StoredSms | null {
  const header = lines.findIndex((line) => line.startsWith("+CMGR:"));
  if (header === -1) return null;
  const body = lines[header + 1];
  return storedSms(
    index,
    {header: lines[header], fields: headerFields(lines[header])},
    body?.startsWith("+CMGR:") ? "" : (body ?? ""),
    charset
  );
}

/** `+CMGL: <index>,<stat>,...` each followed by its body line, in PDU or text form. */
export function parseCmgl(lines: string[], charset: ListingCharset): StoredSms[] {
  const messages: StoredSms[] = [];
  lines.forEach((line, position) => {
    if (!line.startsWith("+CMGL:")) return;
    const [index, ...fields] = headerFields(line);
    if (!/^\d+$/.test(index)) return;
    const body = lines[position + 1];
    messages.push(
      storedSms(
        Number(index),
        {header: line, fields},
        body === undefined || body.startsWith("+CMGL:") ? "" : body,
        charset
      )
    );
  });
  return messages;
}

// `fields` start at <stat>. PDU form: <stat>,[<alpha>],<length> with a numeric <stat>, whatever
// mode was set (some firmware lists PDUs in text mode). Text form: "<stat>","<oa>",[<alpha>],[<scts>];
// a stored status report in text form has <fo>,<mr>,... and no body.
function storedSms(
  index: number,
  {header, fields}: {header: string; fields: string[]},
  body: string,
  charset: ListingCharset
): StoredSms {
  const raw = `${header}\n${body}`;
  if (/^\d+$/.test(fields[0] ?? "")) return pduSms(index, body, Number(fields.at(-1)));
  if (/^\d+$/.test(fields[1] ?? "") && fields.length >= 8) {
    const [messageRef, status] = [Number(fields[2]), Number(fields.at(-1))];
    return {
      index,
      form: "text",
      raw,
      problem: null,
      content: {kind: "status_report", messageRef, status, recipient: fields[3]}
    };
  }
  const decode = (field: string) => (charset === "UCS2" ? fromUcs2Hex(field) : field);
  const sender = charset === "UCS2" ? decodeSender(fields[1] ?? "") : (fields[1] ?? "");
  const content: ReceivedSms = {
    kind: "deliver",
    sender,
    text: decode(body),
    sentAt: textTimestamp(fields[3] ?? ""),
    concat: null
  };
  return {index, form: "text", raw, content, problem: null};
}

function pduSms(index: number, pdu: string, tpduLength: number): StoredSms {
  try {
    const content = decodePdu(pdu, Number.isInteger(tpduLength) ? tpduLength : undefined);
    return {index, form: "pdu", raw: pdu, content, problem: null};
  } catch (error) {
    if (!(error instanceof PduError)) throw error;
    return {index, form: "pdu", raw: pdu, content: null, problem: error.message};
  }
}

// "26/11/22,10:00:00+04": year/month/day, time, zone in quarter hours (27.005 §3.3.1).
function textTimestamp(field: string): string | null {
  const match = /^(\d\d)\/(\d\d)\/(\d\d),(\d\d):(\d\d):(\d\d)([+-]\d\d)$/.exec(field);
  if (!match) return null;
  const [year, month, day, hour, minute, second, zone] = match.slice(1).map(Number);
  const at = Date.UTC(2000 + year, month - 1, day, hour, minute, second) - zone * 15 * 60_000;
  return Number.isNaN(at) ? null : new Date(at).toISOString();
}
