import {createHash, randomBytes} from "node:crypto";
import {secretToken} from "../lib/tokens.js";
import type {Clock} from "../lib/clock.js";

/** One signed-in browser. The cookie carries only the token; the store keeps its hash. */
export interface DashboardSession {
  /** A short public id for logs and the audit log; not usable to authenticate. */
  id: string;
  /** The dashboard user signed in. */
  userId: string;
  /** The user's password hash at sign-in: a new password ends the session. */
  passwordHash: string;
  /** Sent by the page in X-CSRF-Token on every state-changing request. */
  csrfToken: string;
  createdAtMs: number;
  expiresAtMs: number;
  /** Set on sign-out or eviction, so an open event stream notices at once. */
  ended: boolean;
}

function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Dashboard sessions, in memory: a restart signs everyone out, which costs one sign-in and keeps
 * session records out of the journal. Each lasts a fixed time from sign-in (one shift); the
 * number held is capped so a flood of sign-ins cannot grow memory without bound.
 */
export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();

  constructor(
    private readonly clock: Clock,
    readonly lifetimeMs: number,
    private readonly maxSessions = 200
  ) {}

  create(user: {id: string; password_hash: string}): {token: string; session: DashboardSession} {
    this.forgetExpired();
    const token = secretToken(32);
    const now = this.clock.now();
    const session: DashboardSession = {
      id: randomBytes(6).toString("hex"),
      userId: user.id,
      passwordHash: user.password_hash,
      csrfToken: secretToken(32),
      createdAtMs: now,
      expiresAtMs: now + this.lifetimeMs,
      ended: false
    };
    this.sessions.set(digest(token), session);
    // Maps iterate in insertion order: the first entry is the oldest session.
    if (this.sessions.size > this.maxSessions) this.end(this.sessions.keys().next().value as string);
    return {token, session};
  }

  /** The live session a cookie token belongs to, or null (unknown, signed out or expired). */
  find(token: string | undefined): DashboardSession | null {
    if (!token) return null;
    const key = digest(token);
    const session = this.sessions.get(key);
    if (!session) return null;
    if (!this.isLive(session)) {
      this.end(key);
      return null;
    }
    return session;
  }

  isLive(session: DashboardSession): boolean {
    return !session.ended && this.clock.now() < session.expiresAtMs;
  }

  revoke(token: string): void {
    this.end(digest(token));
  }

  private end(key: string): void {
    const session = this.sessions.get(key);
    if (session) session.ended = true;
    this.sessions.delete(key);
  }

  private forgetExpired(): void {
    const now = this.clock.now();
    for (const [key, session] of this.sessions) if (now >= session.expiresAtMs) this.end(key);
  }
}
