import {createHmac, randomBytes} from "node:crypto";

const SECRET_PREFIX = "whsec_";
// The Standard Webhooks spec allows 24-64 bytes; 32 matches the HMAC-SHA256 block strength.
const SECRET_BYTES = 32;

/** A subscription's signing secrets: the current one and, during a rotation, the one it replaced. */
export interface SigningSecrets {
  secret: string;
  previous_secret?: string | null;
  /** Until then deliveries carry a signature with the previous secret as well. */
  previous_secret_expires_at?: string | null;
}

/** The headers that make a delivery verifiable by any Standard Webhooks verifier. */
export interface SignatureHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  /** The contract's header name; the same value as webhook-signature. */
  "X-Service-Signature": string;
}

/** A new secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key being the decoded secret. */
export function signatureOf(secret: string, id: string, timestampSeconds: number, rawBody: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
  return "v1," + createHmac("sha256", key).update(`${id}.${timestampSeconds}.${rawBody}`).digest("base64");
}

/** The secrets a delivery at `nowMs` is signed with: the current one first, then a previous one still in its grace period. */
export function activeSecrets(secrets: SigningSecrets, nowMs: number): string[] {
  const previousValid =
    secrets.previous_secret &&
    secrets.previous_secret_expires_at &&
    Date.parse(secrets.previous_secret_expires_at) > nowMs;
  return previousValid ? [secrets.secret, secrets.previous_secret as string] : [secrets.secret];
}

/** Signs one attempt. The id stays the same on every retry (receivers dedup on it); the timestamp is this attempt's. */
export function signDelivery(secrets: SigningSecrets, id: string, nowMs: number, rawBody: string): SignatureHeaders {
  const timestampSeconds = Math.floor(nowMs / 1000);
  const signature = activeSecrets(secrets, nowMs)
    .map((secret) => signatureOf(secret, id, timestampSeconds, rawBody))
    .join(" ");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signature,
    "X-Service-Signature": signature
  };
}
