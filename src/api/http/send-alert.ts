import type {NotificationsService, SendInput} from "../../services/notifications/notifications.service.js";
import {notificationPath} from "../../services/notifications/notification-view.js";
import {sendAnswer, type AnswerForm} from "../../services/notifications/send-outcome.js";
import {AppError} from "../../services/shared/errors.js";
import {bodyFingerprint} from "../../services/notifications/idempotency.service.js";
import type {Access} from "../auth/api-access.js";
import type {JsonAnswer} from "./write-json.js";

/** The Idempotency-Key header's form: documented on the routes, checked by `checkIdempotencyKey`. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Refuses an Idempotency-Key header of the wrong form, in words, on every route that takes one. */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new AppError("invalid_request", "the Idempotency-Key header must be 1 to 255 visible ASCII characters");
  }
}

/** A validated send request and the headers that shape its answer. */
export interface SendRequest {
  body: SendInput;
  /** The body's bytes as received: an Idempotency-Key's fingerprint. */
  rawBody: Buffer;
  prefer: string | undefined;
  idempotencyKey: string | undefined;
  access: Access;
}

function wantsRepresentation(prefer: string | undefined): boolean {
  return (prefer ?? "")
    .split(",")
    .some((preference) => preference.trim().toLowerCase().replace(/\s+/g, "") === "return=representation");
}

/**
 * POST /api/v1/notifications/send after authentication and validation: 202 with the short form,
 * or 200 with the long form under `Prefer: return=representation`, a Location either way, and
 * the stored answer replayed for a repeated Idempotency-Key. The status is picked here, from what
 * the send did, by `sendAnswer` (the function the idempotency record is stored with).
 */
export async function acceptAlert(notifications: NotificationsService, request: SendRequest): Promise<JsonAnswer> {
  const {idempotencyKey} = request;
  checkIdempotencyKey(idempotencyKey);
  const idempotency = idempotencyKey
    ? {apiKeyId: request.access.principal.id, key: idempotencyKey, fingerprint: bodyFingerprint(request.rawBody)}
    : null;
  const form: AnswerForm = wantsRepresentation(request.prefer) ? "representation" : "minimal";
  const result = await notifications.send(
    request.body,
    request.access.actor,
    idempotency && {request: idempotency, form}
  );
  const answer = result.kind === "replayed" ? result.answer : sendAnswer(result, form);
  const id =
    (answer.body as {id?: string; notification_uuid?: string}).id ??
    (answer.body as {notification_uuid: string}).notification_uuid;
  const headers: Record<string, string> = {Location: notificationPath(id)};
  if (result.kind === "replayed") headers["Idempotent-Replayed"] = "true";
  if (form === "representation") headers["Preference-Applied"] = "return=representation";
  return {status: answer.status, headers, body: answer.body};
}
