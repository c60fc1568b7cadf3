import {createHash} from "node:crypto";
import type {Journal} from "../../store/journal/journal.js";
import type {IdempotencyRepository} from "../../store/journal/idempotency.repository.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {AppError} from "../shared/errors.js";

/** An Idempotency-Key as presented: scoped to the API key, with a fingerprint of the request body. */
export interface IdempotentRequest {
  apiKeyId: string;
  key: string;
  fingerprint: string;
  /** The header that carried `key`, as errors name it: Idempotency-Key unless said otherwise (webhook-id). */
  header?: string;
}

/** A request body's fingerprint: a repeat must carry the same bytes to be replayed. */
export function bodyFingerprint(body: Uint8Array | undefined): string {
  return createHash("sha256")
    .update(body ?? new Uint8Array())
    .digest("hex");
}

/**
 * A create request's fingerprint: its route and its body's bytes. The route is part of it so
 * that one key reused on another endpoint is refused as a mismatch, never answered with the
 * resource another endpoint created.
 */
export function routeFingerprint(route: string, body: Uint8Array | undefined): string {
  return createHash("sha256")
    .update(`${route}\n`)
    .update(body ?? new Uint8Array())
    .digest("hex");
}

/** The answer to replay: status and JSON body. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/**
 * The Idempotency-Key semantics of the IETF draft: the first answer is stored in the same
 * transaction as the change it reports and replayed for the same key and body; a different
 * body is a mismatch; the same key while the first request runs is a conflict.
 */
export class IdempotencyService {
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly journal: Journal,
    private readonly repository: IdempotencyRepository,
    private readonly clock: Clock,
    private readonly retentionHours: number
  ) {}

  /**
   * Runs `work` as a journal write function, storing the answer it returns with its changes; or,
   * for a repeat of the key, returns the stored answer and runs nothing. The answer is data
   * `work` computed from its outcome, the same that the caller's edge will send.
   */
  async run<T>(
    request: IdempotentRequest,
    work: () => {value: T; answer: StoredAnswer}
  ): Promise<{replayed: false; value: T} | {replayed: true; answer: StoredAnswer}> {
    const stored = this.stored(request);
    if (stored) return {replayed: true, answer: stored};
    return this.exclusively(request, async () => {
      const done = await this.journal.write(() => {
        const result = work();
        this.remember(request, result.answer);
        return result;
      });
      return {replayed: false, value: done.value};
    });
  }

  /**
   * The same semantics for work that commits in several transactions of its own: its answer is
   * stored after the work, so a crash in between forgets the answer, and a repeat runs the work
   * again (work that merges repeats, as an integration's events do, tolerates that).
   */
  async runAcross(
    request: IdempotentRequest,
    work: () => Promise<StoredAnswer>
  ): Promise<StoredAnswer & {replayed: boolean}> {
    const stored = this.stored(request);
    if (stored) return {...stored, replayed: true};
    return this.exclusively(request, async () => {
      const answer = await work();
      await this.journal.write(() => this.remember(request, answer));
      return {...answer, replayed: false};
    });
  }

  /** The answer stored for this key, if any; a different body under the same key is refused. */
  private stored(request: IdempotentRequest): StoredAnswer | null {
    const stored = this.journal.read(() =>
      this.repository.find(request.apiKeyId, request.key, isoTimestamp(this.clock.now()))
    );
    if (!stored) return null;
    if (stored.fingerprint !== request.fingerprint)
      throw new AppError(
        "idempotency_mismatch",
        `this ${request.header ?? "Idempotency-Key"} was already used with a different request body`
      );
    return {status: stored.status, body: JSON.parse(stored.body)};
  }

  /** Runs the work unless a request with the same key is still running (refused). Outside any write function: the slot spans the commit. */
  private async exclusively<T>(request: IdempotentRequest, work: () => Promise<T>): Promise<T> {
    const slot = `${request.apiKeyId}\u0000${request.key}`;
    if (this.inFlight.has(slot))
      throw new AppError(
        "idempotency_in_flight",
        `a request with this ${request.header ?? "Idempotency-Key"} is still being processed`
      );
    this.inFlight.add(slot);
    try {
      return await work();
    } finally {
      this.inFlight.delete(slot);
    }
  }

  /** Call inside a journal write. */
  private remember(request: IdempotentRequest, answer: StoredAnswer): void {
    const nowMs = this.clock.now();
    this.repository.insert(
      request.apiKeyId,
      request.key,
      {fingerprint: request.fingerprint, status: answer.status, body: JSON.stringify(answer.body)},
      {nowIso: isoTimestamp(nowMs), expiresIso: isoTimestamp(nowMs + this.retentionHours * 3600_000)}
    );
  }

  /** Forgets answers older than the retention window. */
  prune(): Promise<number> {
    return this.journal.write(() => this.repository.prune(isoTimestamp(this.clock.now())));
  }
}
