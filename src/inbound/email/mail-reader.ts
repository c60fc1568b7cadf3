import {simpleParser, type AddressObject} from "mailparser";

/** The largest HTML part reduced to text; a bigger one is dropped, and the plain text (if any) is used. */
const HTML_MAX_CHARS = 1_000_000;

/** What a mail's MIME says, as read in the parser worker: only plain strings cross to the gateway. */
export interface ParsedMime {
  /** The From header's first address; null when it has none (the envelope sender is used then). */
  sender: string | null;
  subject: string;
  text: string;
}

function firstAddress(from: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(from) ? from : from ? [from] : [];
  return list.flatMap((item) => item.value).find((entry) => entry.address)?.address ?? null;
}

/**
 * Reads a mail's MIME with mailparser. It is lenient by design (a device's odd MIME is read as
 * far as it goes, never thrown out); what it cannot read at all rejects, for the listener to
 * refuse. Subjects in RFC 2047 words and raw UTF-8 both decode. It runs in the MIME parser's
 * worker thread (mime-parser.worker.ts), never on the gateway's main thread.
 */
export async function parseMime(raw: Buffer): Promise<ParsedMime> {
  const parsed = await simpleParser(raw, {
    skipImageLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    maxHtmlLengthToParse: HTML_MAX_CHARS
  });
  return {
    sender: firstAddress(parsed.from),
    subject: (parsed.subject ?? "").replace(/\s+/g, " ").trim(),
    text: (parsed.text ?? "").replace(/\r\n/g, "\n").trim()
  };
}
