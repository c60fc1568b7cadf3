import {createHash, randomBytes, timingSafeEqual} from "node:crypto";

/** An unguessable, URL-safe token: for URLs that carry their own authority, sessions, callback ids. */
export function secretToken(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

/** Compares a presented token with a stored one without leaking, through timing, how much of it matched. */
export function tokensEqual(presented: string, stored: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(stored));
}
