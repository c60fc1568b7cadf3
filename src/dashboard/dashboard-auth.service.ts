import type {Request} from "express";
import {AppError} from "../services/shared/errors.js";
import {hasScope, type ApiKeysService} from "../services/keys/api-keys.service.js";
import type {AuditService} from "../services/shared/audit.service.js";
import type {DashboardUsersService} from "../services/users/dashboard-users.service.js";
import type {DashboardUserRecord} from "../store/config/config-store.js";
import type {RateLimiter} from "../lib/rate-limiter.js";
import type {Actor} from "../domain/actor.js";
import {tokensEqual} from "../lib/tokens.js";
import type {Logger} from "../lib/logger.js";
import type {DashboardSession, SessionStore} from "./session-store.js";
import {sessionTokenOf} from "./session-cookie.js";

/** Who the audit log names for what a user does in the dashboard: the user, by id (the log shows the name). */
export function dashboardActor(user: Pick<DashboardUserRecord, "id">): Actor {
  return {type: "dashboard", id: user.id};
}

/** The header a dashboard page sends its session's CSRF token in. */
export const CSRF_HEADER = "x-csrf-token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The name a sign-in without one means: the single admin of releases before named users was moved to "admin". */
export const DEFAULT_USER_NAME = "admin";

export interface SignedIn {
  token: string;
  session: DashboardSession;
  user: DashboardUserRecord;
}

/** A request's live session and the user it belongs to. */
export interface SessionUser {
  session: DashboardSession;
  user: DashboardUserRecord;
}

/** What DashboardAuthService works with, by name. */
export interface DashboardAuthDeps {
  users: DashboardUsersService;
  keys: ApiKeysService;
  sessions: SessionStore;
  /** Sign-in and set-password attempts, per client address and per user name. */
  attempts: RateLimiter;
  audit: AuditService;
  logger: Logger;
}

/**
 * Signing in to the dashboard as a named user, sessions, and the CSRF check. Making the first
 * admin, or setting a forgotten password, needs an admin API key, so on first start only whoever
 * can read data/initial-admin-key (or holds another admin key) can claim the dashboard.
 */
export class DashboardAuthService {
  constructor(private readonly deps: DashboardAuthDeps) {}

  get sessions(): SessionStore {
    return this.deps.sessions;
  }

  get users(): DashboardUsersService {
    return this.deps.users;
  }

  /** Whether anyone can sign in yet; until then the page offers to make the first admin. */
  get passwordSet(): boolean {
    return this.deps.users.any;
  }

  /**
   * With an admin API key: sets the password of the user named `name`, or makes that user an
   * admin when there is none of that name (the first run's first admin). The caller has charged
   * the attempt (`chargeAttempt`) before reading the body.
   */
  async setPassword(adminKey: string, credentials: {name: string; password: string}, address: string): Promise<void> {
    const key = this.deps.keys.authenticate(adminKey);
    if (!key || !hasScope(key, "admin")) {
      this.deps.logger.warn("dashboard password change refused: not an admin key", {address});
      throw new AppError("unauthenticated", "that is not an active admin API key", {
        errors: [{pointer: "/admin_key", detail: "not an active admin API key"}]
      });
    }
    const actor: Actor = {type: "api_key", id: key.id};
    const user = this.deps.users.named(credentials.name);
    if (user) await this.deps.users.setPassword(user.id, credentials.password, actor);
    else await this.deps.users.create({name: credentials.name, role: "admin", password: credentials.password}, actor);
  }

  /** The caller has charged the attempt's address (`chargeAttempt`); the name's own budget is charged here. */
  async signIn(name: string, password: string, address: string): Promise<SignedIn> {
    if (!this.passwordSet)
      throw new AppError("conflict", "no user exists yet: make the first admin with an admin API key");
    this.charge(`user ${name.trim().toLowerCase()}`, "too many sign-in attempts for this user");
    const user = await this.deps.users.verify(name, password);
    if (!user) {
      this.deps.logger.warn("dashboard sign-in refused: wrong name or password", {address});
      throw new AppError("unauthenticated", "wrong name or password", {
        errors: [{pointer: "/password", detail: "wrong name or password"}]
      });
    }
    const signedIn = this.deps.sessions.create(user);
    await this.deps.audit.record(
      dashboardActor(user),
      "dashboard.signed_in",
      {type: "dashboard_session", id: signedIn.session.id},
      {address}
    );
    return {...signedIn, user};
  }

  async signOut(token: string, {session, user}: SessionUser): Promise<void> {
    this.deps.sessions.revoke(token);
    await this.deps.audit.record(
      dashboardActor(user),
      "dashboard.signed_out",
      {type: "dashboard_session", id: session.id},
      {}
    );
  }

  /**
   * The live session of a request that carries the cookie, with its user, or null. A session
   * ends with its user: deleted, or given a new password since it began. A state-changing request
   * must also carry the session's CSRF token: the cookie alone proves only that a browser sent
   * it, not that our page did.
   */
  sessionFor(request: Pick<Request, "headers" | "method">): SessionUser | null {
    const found = this.signedIn(sessionTokenOf(request));
    if (!found) return null;
    const presented = request.headers[CSRF_HEADER];
    if (
      !SAFE_METHODS.has(request.method) &&
      !(typeof presented === "string" && tokensEqual(presented, found.session.csrfToken))
    ) {
      throw new AppError(
        "csrf_token_invalid",
        "this dashboard request lacks the session's X-CSRF-Token header, or it does not match"
      );
    }
    return found;
  }

  /** The live session a cookie token belongs to, with its user, or null; no CSRF check (for reads of the page's state). */
  signedIn(token: string | undefined): SessionUser | null {
    const session = this.deps.sessions.find(token);
    if (!session) return null;
    const user = this.userOf(session);
    if (!user) {
      this.deps.sessions.revoke(token as string);
      return null;
    }
    return {session, user};
  }

  /** Whether a session is still good: not ended or expired, and its user unchanged in the ways that end it. */
  isLive(session: DashboardSession): boolean {
    return this.deps.sessions.isLive(session) && this.userOf(session) !== null;
  }

  /**
   * Spends one sign-in or set-password attempt of an address; 429 when none is left. Every
   * attempt counts, right or wrong, even one whose body is then refused: counting only failures
   * would let parallel guesses all pass the check while the slow hash runs, and charging only
   * valid bodies would let malformed ones hammer the route for free. A person signs in far less
   * often than the limit. Each user name has a budget of its own too (`signIn`), so guesses at
   * one person's password spread over many addresses are slowed as well.
   */
  chargeAttempt(address: string): void {
    this.charge(`address ${address}`, "too many sign-in attempts from this address");
  }

  private charge(bucket: string, words: string): void {
    const decision = this.deps.attempts.take(bucket);
    if (!decision.allowed) {
      this.deps.logger.warn("dashboard sign-in throttled", {bucket});
      throw new AppError("rate_limited", `${words}; wait and try again`, {retryAfterSeconds: decision.resetSeconds});
    }
  }

  private userOf(session: DashboardSession): DashboardUserRecord | null {
    const user = this.deps.users.find(session.userId);
    return user && user.password_hash === session.passwordHash ? user : null;
  }
}
