/**
 * A received mail as the email integrations use it: who sent it, its subject and its text. The
 * SMTP listener (inbound/) reads it and the email intake (services/) maps it, so it lives here,
 * below both.
 */
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
