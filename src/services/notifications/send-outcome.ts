import type {StoredAnswer} from "./idempotency.service.js";
import {shortForm, type NotificationView} from "./notification-view.js";

/** What an accepted send did: created a notification, or merged into the open one with its dedup_key. */
export interface SendOutcome {
  kind: "created" | "merged";
  view: NotificationView;
}

/** What a send with an Idempotency-Key did: a new outcome, or the answer stored for a repeat of the key. */
export type SendResult = SendOutcome | {kind: "replayed"; answer: StoredAnswer};

/** The form the client asked for (RFC 7240 `Prefer: return=...`): the short form unless it wants the representation. */
export type AnswerForm = "minimal" | "representation";

/**
 * The API's answer to a send: 200 with the long form when the client asked for the
 * representation, else 202 with the short form. Pure, and the one place this is decided: the
 * edge answers with it, and the idempotency record stores what it returns for the same outcome
 * and form, so a repeat of the key gets the answer first sent.
 */
export function sendAnswer(outcome: SendOutcome, form: AnswerForm): StoredAnswer {
  return form === "representation" ? {status: 200, body: outcome.view} : {status: 202, body: shortForm(outcome.view)};
}
