import {simpleParser, type AddressObject} from "mailparser";

/** A received mail as the email integrations use it: who sent it, its subject and its text. */
export interface InboundMail {
  /** The From header's address, else the envelope sender ("" for a bounce). */
  sender: string;
  /** The RCPT TO addresses the listener accepted, lowercased. */
  recipients: string[];
  subject: string;
  /** The text body; an HTML-only mail's HTML reduced to text. Attachments are dropped. */
  text: string;
  /** Bytes of the message as received. */
  size: number;
  /** The connecting client's address. */
  remoteAddress: string;
}

/** The largest HTML part reduced to text; a bigger one is dropped, and the plain text (if any) is used. */
const HTML_MAX_CHARS = 1_000_000;

function firstAddress(from: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(from) ? from : from ? [from] : [];
  return list.flatMap((item) => item.value).find((entry) => entry.address)?.address ?? null;
}

/**
 * Reads a mail's MIME with mailparser. It is lenient by design (a device's odd MIME is read as
 * far as it goes, never thrown out); what it cannot read at all rejects, for the listener to
 * refuse. Subjects in RFC 2047 words and raw UTF-8 both decode.
 */
export async function readMail(
  raw: Buffer,
  envelope: {sender: string; recipients: string[]; remoteAddress: string}
): Promise<InboundMail> {
  const parsed = await simpleParser(raw, {
    skipImageLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    maxHtmlLengthToParse: HTML_MAX_CHARS
  });
  return {
    sender: firstAddress(parsed.from) ?? envelope.sender,
    recipients: envelope.recipients,
    subject: (parsed.subject ?? "").replace(/\s+/g, " ").trim(),
    text: (parsed.text ?? "").replace(/\r\n/g, "\n").trim(),
    size: raw.length,
    remoteAddress: envelope.remoteAddress
  };
}
