import type {Request} from "express";
import {AppError} from "../services/shared/errors.js";
import {hasScope, type ApiKeysService} from "../services/keys/api-keys.service.js";
import type {AuditService} from "../services/shared/audit.service.js";
import type {RateLimiter} from "../lib/rate-limiter.js";
import type {Actor} from "../domain/actor.js";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import {tokensEqual} from "../lib/tokens.js";
import type {Logger} from "../lib/logger.js";
import type {AdminCredentialRepository} from "./admin-credential.repository.js";
import {hashPassword, verifyPassword} from "../lib/password-hash.js";
import type {DashboardSession, SessionStore} from "./session-store.js";
import {sessionTokenOf} from "./session-cookie.js";

/** Who the audit log names for what is done in the dashboard: it has one user, the admin. */
export const DASHBOARD_ACTOR: Actor = {type: "dashboard", id: "admin"};

/** The header a dashboard page sends its session's CSRF token in. */
export const CSRF_HEADER = "x-csrf-token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface SignedIn {
  token: string;
  session: DashboardSession;
}

/** What DashboardAuthService works with, by name. */
export interface DashboardAuthDeps {
  credential: AdminCredentialRepository;
  keys: ApiKeysService;
  sessions: SessionStore;
  /** Sign-in and set-password attempts per client address. */
  attempts: RateLimiter;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
}

/**
 * The dashboard's one user: an admin password (stored as a scrypt hash), sessions, and the CSRF
 * check. Setting the password needs an admin API key, so on first start only whoever can read
 * data/initial-admin-key (or holds another admin key) can claim the dashboard, and the same holds
 * for resetting a forgotten password.
 */
export class DashboardAuthService {
  constructor(private readonly deps: DashboardAuthDeps) {}

  get sessions(): SessionStore {
    return this.deps.sessions;
  }

  get passwordSet(): boolean {
    return this.deps.credential.get().password_hash !== null;
  }

  /** The caller has charged the attempt (`chargeAttempt`) before reading the body. */
  async setPassword(adminKey: string, password: string, address: string): Promise<void> {
    const key = this.deps.keys.authenticate(adminKey);
    if (!key || !hasScope(key, "admin")) {
      this.deps.logger.warn("dashboard password change refused: not an admin key", {address});
      throw new AppError("unauthenticated", "that is not an active admin API key", {
        errors: [{pointer: "/admin_key", detail: "not an active admin API key"}]
      });
    }
    const hash = await hashPassword(password);
    await this.deps.credential.save({password_hash: hash, password_set_at: isoTimestamp(this.deps.clock.now())});
    this.deps.sessions.revokeAll();
    await this.deps.audit.record(
      {type: "api_key", id: key.id},
      "dashboard.password_set",
      {type: "dashboard", id: "admin"},
      {address}
    );
  }

  /** The caller has charged the attempt (`chargeAttempt`) before reading the body. */
  async signIn(password: string, address: string): Promise<SignedIn> {
    const stored = this.deps.credential.get().password_hash;
    if (!stored) throw new AppError("conflict", "no admin password is set yet: set one with an admin API key first");
    if (!(await verifyPassword(password, stored))) {
      this.deps.logger.warn("dashboard sign-in refused: wrong password", {address});
      throw new AppError("unauthenticated", "wrong password", {
        errors: [{pointer: "/password", detail: "wrong password"}]
      });
    }
    const signedIn = this.deps.sessions.create();
    await this.deps.audit.record(
      DASHBOARD_ACTOR,
      "dashboard.signed_in",
      {type: "dashboard_session", id: signedIn.session.id},
      {address}
    );
    return signedIn;
  }

  async signOut(token: string, session: DashboardSession): Promise<void> {
    this.deps.sessions.revoke(token);
    await this.deps.audit.record(
      DASHBOARD_ACTOR,
      "dashboard.signed_out",
      {type: "dashboard_session", id: session.id},
      {}
    );
  }

  /**
   * The live session of a request that carries the cookie, or null. A state-changing request
   * must also carry the session's CSRF token: the cookie alone proves only that a browser sent
   * it, not that our page did.
   */
  sessionFor(request: Pick<Request, "headers" | "method">): DashboardSession | null {
    const session = this.deps.sessions.find(sessionTokenOf(request));
    if (!session) return null;
    const presented = request.headers[CSRF_HEADER];
    if (
      !SAFE_METHODS.has(request.method) &&
      !(typeof presented === "string" && tokensEqual(presented, session.csrfToken))
    ) {
      throw new AppError(
        "csrf_token_invalid",
        "this dashboard request lacks the session's X-CSRF-Token header, or it does not match"
      );
    }
    return session;
  }

  /**
   * Spends one sign-in or set-password attempt of an address; 429 when none is left. Every
   * attempt counts, right or wrong, even one whose body is then refused: counting only failures
   * would let parallel guesses all pass the check while the slow hash runs, and charging only
   * valid bodies would let malformed ones hammer the route for free. A person signs in far less
   * often than the limit.
   */
  chargeAttempt(address: string): void {
    const decision = this.deps.attempts.take(address);
    if (!decision.allowed) {
      this.deps.logger.warn("dashboard sign-in throttled", {address});
      throw new AppError("rate_limited", "too many sign-in attempts from this address; wait and try again", {
        retryAfterSeconds: decision.resetSeconds
      });
    }
  }
}
