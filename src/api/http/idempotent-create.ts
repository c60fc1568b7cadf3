import type {PlatformContext} from "@tsed/platform-http";
import {In, Returns} from "@tsed/schema";
import {routeFingerprint, type IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {callerOf} from "../auth/api-access.js";
import {combineMethodDecorators, expressRequest, expressResponse} from "../typed-tsed.js";
import {ProblemModel} from "../models/problem.model.js";
import {created} from "./respond.js";
import {checkIdempotencyKey, IDEMPOTENCY_KEY} from "./send-alert.js";

/** What a create route made: where the new resource lives, its view, and any secret shown only now. */
export interface Creation {
  location: string;
  resource: object;
  /** Fields of this answer only (a whole API key, a signing secret): never stored, so never replayed. */
  secrets?: Record<string, string>;
}

/** The creation as remembered in the journal: the Location travels in the stored body, beside the resource. */
interface RememberedCreation {
  location: string;
  resource: object;
}

/** The route's own 409 and 422 reasons, joined with the idempotency ones in the documentation. */
export interface CreateRefusals {
  conflict?: string;
  unprocessable?: string;
}

const IN_FLIGHT = "the same Idempotency-Key is still being processed";
const MISMATCH = "Idempotency-Key reused with another body or on another endpoint";

function joined(own: string | undefined, idempotency: string): string {
  return own ? `${own}, or ${idempotency}` : idempotency.charAt(0).toUpperCase() + idempotency.slice(1);
}

/**
 * Documents a create endpoint's Idempotency-Key header and the answers it adds (409 while the
 * first request runs, 422 for a reused key). Goes with `answerCreation` in the route's body.
 */
export function IdempotentCreate(refusals: CreateRefusals = {}) {
  return combineMethodDecorators(
    In("header")
      .Type(String)
      .Name("Idempotency-Key")
      .Pattern(IDEMPOTENCY_KEY)
      .Description(
        "Makes a retry safe: the same key and body within journal.idempotency_hours answers the first 201 again " +
          "(Idempotent-Replayed: true) and creates nothing. A replay leaves out the secret the first answer carried."
      ),
    Returns(409, ProblemModel).Description(joined(refusals.conflict, IN_FLIGHT)),
    Returns(422, ProblemModel).Description(joined(refusals.unprocessable, MISMATCH))
  );
}

/**
 * Runs a create route's work and answers 201 with Location, honouring Idempotency-Key as the
 * send endpoint does: scoped to the caller, fingerprinted by route and body bytes, replayed with
 * Idempotent-Replayed, 422 for another body, 409 while the first is running.
 *
 * The resource lives in the config store and the answer in the journal: two stores, no shared
 * transaction. The answer is recorded right after the create commits (`runAcross`); a crash
 * between the two forgets the answer, and a retry then creates a second resource.
 */
export async function answerCreation(
  ctx: PlatformContext,
  idempotency: IdempotencyService,
  create: () => Promise<Creation>
): Promise<object> {
  const request = expressRequest(ctx);
  const key = request.get("idempotency-key");
  if (key === undefined) {
    const creation = await create();
    return created(ctx, creation.location, {...creation.resource, ...creation.secrets});
  }
  checkIdempotencyKey(key);
  let secrets: Record<string, string> | undefined;
  const answer = await idempotency.runAcross(
    {
      apiKeyId: callerOf(request).principal.id,
      key,
      fingerprint: routeFingerprint(`${request.method} ${request.originalUrl.split("?")[0]}`, request.rawBody)
    },
    async () => {
      const creation = await create();
      secrets = creation.secrets;
      const remembered: RememberedCreation = {location: creation.location, resource: creation.resource};
      return {status: 201, body: remembered};
    }
  );
  const {location, resource} = answer.body as RememberedCreation;
  if (answer.replayed) expressResponse(ctx).setHeader("Idempotent-Replayed", "true");
  return created(ctx, location, {...resource, ...secrets});
}
