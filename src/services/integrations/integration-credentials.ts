import {derivedToken, secretToken, tokensEqual} from "../../lib/tokens.js";
import {newWebhookSecret, signatureOf} from "../../lib/webhook-signing.js";
import {PLC_KINDS} from "./plc/plc-settings.js";
import type {Clock} from "../../lib/clock.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import {AppError} from "../shared/errors.js";

/** The local part of an email integration's address: derived from its secret, so rotating the credentials changes it. */
export function emailAddressToken(integration: IntegrationRecord): string {
  return derivedToken(integration.secret ?? "", "inbound-email-address");
}

/**
 * A new signing secret and keyless URL token, for the kinds that receive events; none for modbus
 * and opcua, which ask their device and take no events: a secret nobody uses is only one to leak.
 */
export function newCredentials(kind: IntegrationRecord["kind"]): {secret?: string; url_token?: string} {
  return PLC_KINDS.includes(kind) ? {} : {secret: newWebhookSecret(), url_token: secretToken()};
}

/** The signature headers of a signed event (Standard Webhooks, as outbound webhooks are signed). */
export interface SignatureHeaders {
  id?: string;
  timestamp?: string;
  /** `webhook-signature` or, the same value, `X-Service-Signature`. */
  signature?: string;
}

/** Signed events older or newer than this are refused, as receivers of our webhooks are told to do. */
const REPLAY_WINDOW_SECONDS = 300;
// Kept as an idempotency key (the Idempotency-Key header has the same bound).
const WEBHOOK_ID_MAX_LENGTH = 255;

/** Who sent an inbound event: a signature checked against the integration's secret, or its URL token. */
export class IntegrationCredentials {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly clock: Clock
  ) {}

  /**
   * The integration a correctly signed event is for. The signature is the outbound webhooks' own
   * (HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<raw body>" with the integration's
   * secret); a timestamp more than five minutes off the gateway's clock is refused as a replay.
   */
  authenticateSigned(id: string, headers: SignatureHeaders, rawBody: Buffer): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!headers.id || !headers.timestamp || !headers.signature)
      throw new AppError(
        "unauthenticated",
        "a signed event needs the webhook-id, webhook-timestamp and webhook-signature (or X-Service-Signature) headers"
      );
    if (headers.id.length > WEBHOOK_ID_MAX_LENGTH)
      throw new AppError("unauthenticated", `webhook-id must be at most ${WEBHOOK_ID_MAX_LENGTH} characters`);
    // A modbus or opcua integration has no secret: Klaxon asks its device, nothing signs events for it.
    if (!integration?.secret) throw new AppError("unauthenticated", "the signature does not match");
    if (!/^\d{1,12}$/.test(headers.timestamp))
      throw new AppError("unauthenticated", "webhook-timestamp must be Unix seconds");
    const timestamp = Number(headers.timestamp);
    if (Math.abs(this.clock.now() / 1000 - timestamp) > REPLAY_WINDOW_SECONDS) {
      throw new AppError(
        "unauthenticated",
        `webhook-timestamp is more than ${REPLAY_WINDOW_SECONDS} seconds from the gateway's clock; a replayed or badly timed event is refused`
      );
    }
    const expected = signatureOf(integration.secret, headers.id, timestamp, rawBody.toString("utf8"));
    if (!headers.signature.split(" ").some((presented) => tokensEqual(presented, expected)))
      throw new AppError("unauthenticated", "the signature does not match");
    return integration;
  }

  /** The integration whose keyless URL carries this token. */
  authenticateToken(id: string, token: string): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!integration?.url_token || !tokensEqual(token, integration.url_token))
      throw new AppError("unauthenticated", "the token does not belong to this integration");
    return integration;
  }
}
