import {simpleParser, type AddressObject} from "mailparser";
import type {InboundMail} from "../../domain/inbound-mail.js";

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
