import {createHmac, timingSafeEqual} from "node:crypto";
import type {Clock} from "./clock.js";

/** What an acknowledge link grants: acknowledging these alerts as this person, until it expires. */
export interface AckLinkClaims {
  notification_ids: string[];
  recipient: {uuid: string; name: string; email: string};
  expires_at_ms: number;
}

export type AckLinkCheck = {valid: true; claims: AckLinkClaims} | {valid: false; reason: "invalid" | "expired"};

export interface AckLinkOptions {
  /** Base for links people open, e.g. http://klaxon.factory.lan:8080; empty means no links. */
  publicUrl: string;
  lifetimeDays: number;
}

const VERSION = "v1";
// Signed with the payload, so a signature made by this key for any other purpose can never be
// passed off as an acknowledge link (one key, one purpose per label).
const PURPOSE = "klaxon/ack-link/v1";
// Far above any grouped email; refuses absurd input before parsing it.
const MAX_TOKEN_CHARS = 16_000;

/**
 * Signs and checks acknowledge links. A link carries its own authority: the alerts, the person
 * and the expiry, signed with HMAC-SHA256 under a key only this gateway holds, so the journal
 * keeps no per-link rows and a link survives restarts and restores for as long as the key does.
 */
export class AckLinkSigner {
  constructor(
    private readonly key: Buffer,
    private readonly clock: Clock,
    private readonly options: AckLinkOptions
  ) {}

  /** Why emails carry no link, or null when they do. */
  get disabledReason(): string | null {
    return this.options.publicUrl.trim() ? null : "public_url is not set, so emails carry no acknowledge link";
  }

  get lifetimeDays(): number {
    return this.options.lifetimeDays;
  }

  /** The link for these alerts and this person, or null while links are off (see disabledReason). */
  linkFor(notificationIds: string[], recipient: AckLinkClaims["recipient"]): {url: string; expiresAtMs: number} | null {
    if (this.disabledReason) return null;
    const base = this.options.publicUrl.trim().replace(/\/+$/, "");
    const expiresAtMs = this.clock.now() + this.options.lifetimeDays * 86_400_000;
    return {
      url: `${base}/ack/${this.sign({notification_ids: notificationIds, recipient, expires_at_ms: expiresAtMs})}`,
      expiresAtMs
    };
  }

  sign(claims: AckLinkClaims): string {
    const payload = Buffer.from(
      JSON.stringify({n: claims.notification_ids, r: claims.recipient, x: claims.expires_at_ms})
    ).toString("base64url");
    return `${VERSION}.${payload}.${this.mac(payload).toString("base64url")}`;
  }

  /** Checks the signature before reading anything in the payload, then the expiry. */
  check(token: string): AckLinkCheck {
    if (token.length > MAX_TOKEN_CHARS) return {valid: false, reason: "invalid"};
    const [version, payload, signature, ...rest] = token.split(".");
    if (version !== VERSION || !payload || !signature || rest.length) return {valid: false, reason: "invalid"};
    const expected = this.mac(payload);
    const given = Buffer.from(signature, "base64url");
    // Re-encoding refuses the spare-bit variants of the last base64 character: one link, one spelling.
    if (
      given.length !== expected.length ||
      given.toString("base64url") !== signature ||
      !timingSafeEqual(given, expected)
    )
      return {valid: false, reason: "invalid"};
    const claims = parseClaims(payload);
    if (!claims) return {valid: false, reason: "invalid"};
    if (this.clock.now() >= claims.expires_at_ms) return {valid: false, reason: "expired"};
    return {valid: true, claims};
  }

  private mac(payload: string): Buffer {
    return createHmac("sha256", this.key).update(`${PURPOSE}.${payload}`).digest();
  }
}

// Only reached with a valid signature, so a failure here means a bug or a changed format, never an attacker.
function parseClaims(payload: string): AckLinkClaims | null {
  try {
    const raw = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
      n?: unknown;
      r?: {uuid?: unknown; name?: unknown; email?: unknown};
      x?: unknown;
    };
    const ids = raw.n;
    const recipient = raw.r;
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string") || typeof raw.x !== "number") return null;
    if (
      !recipient ||
      typeof recipient.uuid !== "string" ||
      typeof recipient.name !== "string" ||
      typeof recipient.email !== "string"
    )
      return null;
    return {
      notification_ids: ids,
      recipient: {uuid: recipient.uuid, name: recipient.name, email: recipient.email},
      expires_at_ms: raw.x
    };
  } catch {
    return null;
  }
}
