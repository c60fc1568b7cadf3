import {createHash, createHmac, randomBytes, timingSafeEqual} from "node:crypto";

/** An unguessable, URL-safe token: for URLs that carry their own authority, sessions, callback ids. */
export function secretToken(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

/** Compares a presented token with a stored one without leaking, through timing, how much of it matched. */
export function tokensEqual(presented: string, stored: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(stored));
}

/**
 * A token derived from a secret for one purpose (HMAC-SHA-256, lowercase hex): changes when the
 * secret does, and reveals nothing of it. Lowercase, so it survives systems that fold case
 * (the local part of an email address).
 */
export function derivedToken(secret: string, purpose: string, hexChars = 24): string {
  return createHmac("sha256", secret).update(purpose).digest("hex").slice(0, hexChars);
}

/**
 * What one box of a pair shows the other when it hands over the tail of its journal
 * (docs/high-availability.md): derived from the ack-link key, which the journal carries to both.
 */
export function boxToken(ackLinkKeyHex: string): string {
  return derivedToken(ackLinkKeyHex, "klaxon/box-hand-over/v1", 64);
}
