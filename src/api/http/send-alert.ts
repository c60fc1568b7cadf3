import type {NotificationsService, SendInput} from "../../services/notifications/notifications.service.js";
import {notificationPath, shortForm} from "../../services/notifications/notification-view.js";
import {AppError} from "../../services/shared/errors.js";
import {bodyFingerprint} from "../../services/notifications/idempotency.service.js";
import type {Access} from "../auth/api-access.js";

/** The Idempotency-Key header's form: documented on the route, checked here with a clear message. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A validated send request and the headers that shape its answer. */
export interface SendRequest {
  body: SendInput;
  /** The body's bytes as received: an Idempotency-Key's fingerprint. */
  rawBody: Buffer;
  prefer: string | undefined;
  idempotencyKey: string | undefined;
  access: Access;
}

export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function wantsRepresentation(prefer: string | undefined): boolean {
  return (prefer ?? "").split(",").some((preference) => preference.trim().toLowerCase().replace(/\s+/g, "") === "return=representation");
}

/**
 * POST /api/v1/notifications/send after authentication and validation: 202 with the short form,
 * or 200 with the long form under `Prefer: return=representation`, a Location either way, and
 * the stored answer replayed for a repeated Idempotency-Key. Shared by the Ts.ED route and the
 * direct route (`direct-send.ts`), so both answer the same.
 */
export async function acceptAlert(notifications: NotificationsService, request: SendRequest): Promise<JsonAnswer> {
  const {idempotencyKey} = request;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw new AppError("invalid_request", "the Idempotency-Key header must be 1 to 255 visible ASCII characters");
  }
  const idempotency = idempotencyKey
    ? {apiKeyId: request.access.principal.id, key: idempotencyKey, fingerprint: bodyFingerprint(request.rawBody)}
    : null;
  const representation = wantsRepresentation(request.prefer);
  const answer = await notifications.send(request.body, request.access.actor, idempotency, ({view}) =>
    representation ? {status: 200, body: view} : {status: 202, body: shortForm(view)}
  );
  const id = (answer.body as {id?: string; notification_uuid?: string}).id ?? (answer.body as {notification_uuid: string}).notification_uuid;
  const headers: Record<string, string> = {Location: notificationPath(id)};
  if (answer.replayed) headers["Idempotent-Replayed"] = "true";
  if (representation) headers["Preference-Applied"] = "return=representation";
  return {status: answer.status, headers, body: answer.body};
}
