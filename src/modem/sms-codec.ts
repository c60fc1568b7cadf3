// The pure half of SMS on the modem: which alphabet a text needs, how long it is in that
// alphabet, and how to read the text-mode listings. Reading always runs with AT+CSCS="UCS2", so
// every message body is one line of hex that can never look like OK, a URC or a second line.

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

/** One message read from the modem's storage. */
export interface StoredSms {
  index: number;
  sender: string;
  text: string;
}

/** `+CMTI: "SM",3` → 3; null for any other line. */
export function parseCmti(line: string): number | null {
  const match = /^\+CMTI:\s*"[^"]*",\s*(\d+)/.exec(line);
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

/** `+CMGR: <stat>,<oa>,...` followed by its body line. */
export function parseCmgr(index: number, lines: string[]): StoredSms | null {
  const header = lines.findIndex((line) => line.startsWith("+CMGR:"));
  if (header === -1) return null;
  const fields = headerFields(lines[header]);
  return {index, sender: decodeSender(fields[1] ?? ""), text: fromUcs2Hex(lines[header + 1] ?? "")};
}

/** `+CMGL: <index>,<stat>,<oa>,...` each followed by its body line. */
export function parseCmgl(lines: string[]): StoredSms[] {
  const messages: StoredSms[] = [];
  lines.forEach((line, position) => {
    if (!line.startsWith("+CMGL:")) return;
    const fields = headerFields(line);
    const index = Number(fields[0]);
    if (!Number.isInteger(index)) return;
    const body = lines[position + 1];
    messages.push({
      index,
      sender: decodeSender(fields[2] ?? ""),
      text: body === undefined || body.startsWith("+CMGL:") ? "" : fromUcs2Hex(body)
    });
  });
  return messages;
}
